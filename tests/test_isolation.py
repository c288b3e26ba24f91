"""Isolated queues (SPEC 3, RWQ-KEYS-008 and RWQ-KEYS-009): no two accepted prefixes share a key.

The property tests check the rule on the key layout itself, for any prefixes and ids (ids may
contain ':'); the Redis tests run every operation on queues whose names nest or start alike and
show that each touches only its own keys, and that the refused names fail before any I/O.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

import pytest
import redis
import redis.asyncio as aioredis
from hypothesis import event, given
from hypothesis import strategies as st

from rwq import (
    AsyncWorkQueue,
    FailOutcome,
    InvalidArgument,
    Outcome,
    RetryPolicy,
    WorkQueue,
)
from rwq.protocol import acl
from rwq.protocol import validation as v
from rwq.protocol.sharding import ShardLayout
from rwq.sharded import ShardedWorkQueue

FIXED = (
    "queue",
    "processing",
    "policy",
    "attempts",
    "dead",
    "dead:data",
    "dead:info",
    "delayed",
    "delayed:data",
)
FAMILIES = ("item", "lease", "leased_by_session", "deep_clean")
ACCEPTED = ("a", "a:queue", "a:items", "a:dead", "jobs", "jobs:high")
REFUSED = (
    "a:item",
    "a:lease",
    "a:leased_by_session",
    "a:deep_clean",
    "jobs:lease:eu",
    "x:item:y",
    "{t}:item",
)
# Ids that spell other queues' keys, were the rule missing.
IDS = ("queue", "x:queue", "high:queue", "item:queue", "processing", "dead:data", "lease:x", "1")


def keys_of(prefix: str, texts: Iterable[str]) -> set[str]:
    """Every key queue ``prefix`` can have with these ids (and deep_clean runs)."""
    keys = {f"{prefix}:{name}" for name in FIXED}
    return keys | {f"{prefix}:{family}:{text}" for family in FAMILIES for text in texts}


def owners(key: str, prefixes: Iterable[str]) -> list[str]:
    """The queues of ``prefixes`` whose layout has ``key`` (the rule makes it at most one)."""
    found = []
    for prefix in prefixes:
        if key.startswith(prefix + ":"):
            tail = key[len(prefix) + 1 :]
            family, _, text = tail.partition(":")
            if tail in FIXED or (family in FAMILIES and text):
                found.append(prefix)
    return found


def accepted(prefix: str, rule: Callable[..., str] = v.prefix) -> bool:
    """Whether ``rule`` (RWQ-KEYS-008's :func:`~rwq.protocol.validation.prefix` by default)
    accepts ``prefix``."""
    try:
        rule(prefix, cluster=False)
    except InvalidArgument:
        return False
    return True


_SEGMENTS = st.one_of(
    st.sampled_from(("a", "jobs", "high", "", "{t}", "items", "data", "info", *FIXED, *FAMILIES)),
    st.text(alphabet="ab:", max_size=3),
)
_PREFIXES = st.lists(_SEGMENTS, min_size=1, max_size=4).map(":".join).filter(bool)
_TEXTS = st.lists(st.lists(_SEGMENTS, min_size=1, max_size=4).map(":".join).filter(bool), max_size=4)


@given(_PREFIXES, st.lists(_SEGMENTS, max_size=4), _TEXTS, _TEXTS, st.booleans())
def test_accepted_prefixes_share_no_key(
    a: str, more: list[str], a_ids: list[str], b_ids: list[str], nest: bool
) -> None:
    """RWQ-KEYS-008 suffices: two accepted prefixes have disjoint key sets, whatever the ids, and
    no key of one matches the other's cleaner pattern ``P:item:*``."""
    b = ":".join([a, *more]) if nest else ":".join(more) or "jobs"
    if a == b or not (accepted(a) and accepted(b)):
        return
    keys_a, keys_b = keys_of(a, a_ids), keys_of(b, b_ids)
    assert not keys_a & keys_b
    assert not [key for key in keys_b if key.startswith(f"{a}:item:")]
    assert not [key for key in keys_a if key.startswith(f"{b}:item:")]


@given(_PREFIXES)
def test_every_refused_prefix_nests_in_another_queue(b: str) -> None:
    """RWQ-KEYS-008 refuses only what can collide: a prefix refused for a segment has its main list
    equal to a key of the queue named by the segments before it, for some id."""
    segments = b.split(":")
    at = next((i for i, s in enumerate(segments) if i and s in v.RESERVED_SEGMENTS), None)
    if at is None:
        return
    with pytest.raises(InvalidArgument, match="RWQ-KEYS-008"):
        v.prefix(b, cluster=False)
    a = ":".join(segments[:at])
    text = ":".join([*segments[at + 1 :], "queue"])
    assert f"{b}:queue" in keys_of(a, [text])


@pytest.mark.parametrize("prefix", REFUSED)
def test_refused_before_any_io(prefix: str) -> None:
    """Both clients refuse the prefix when the queue is created: the server here does not exist."""
    nowhere = redis.Redis(port=1, socket_connect_timeout=0.1)
    with pytest.raises(InvalidArgument, match="RWQ-KEYS-008"):
        WorkQueue(nowhere, prefix)
    with pytest.raises(InvalidArgument, match="RWQ-KEYS-008"):
        AsyncWorkQueue(aioredis.Redis(port=1), prefix)


SHARD_FORMS = ("{jobs#0}", "{jobs#1023}", "{a:b#7}", "{jobs#1#2}")
NOT_SHARD_FORMS = (
    "{jobs#01}",
    "{jobs#1024}",
    "{jobs#bell}",
    "{jobs#x}",
    "{#0}",
    "{{a#0}",
    "jobs#0",
    "{jobs#0}:x",
    "x{jobs#0}",
)


@pytest.mark.parametrize("prefix", SHARD_FORMS)
def test_a_shards_form_is_refused_before_any_io(prefix: str) -> None:
    """RWQ-KEYS-010: a queue opened on its own cannot be shard i of a sharded queue, ``{P#i}``;
    ``rwq acl`` refuses it too. The sharded queue's own layout opens its shards."""
    nowhere = redis.Redis(port=1, socket_connect_timeout=0.1)
    with pytest.raises(InvalidArgument, match="RWQ-KEYS-010"):
        WorkQueue(nowhere, prefix)
    with pytest.raises(InvalidArgument, match="RWQ-KEYS-010"):
        AsyncWorkQueue(aioredis.Redis(port=1), prefix)
    with pytest.raises(InvalidArgument, match="RWQ-KEYS-010"):
        acl.rules("worker", prefix)
    assert v.prefix(prefix, cluster=True) == prefix  # the rules of every prefix accept it


def sharded_keys_of(name: str, shards: int, texts: Iterable[str]) -> set[str]:
    """Every key sharded queue ``name`` can have: its shards', the count key and the bell."""
    keys = {f"{{{name}#0}}:shards", f"{{{name}#bell}}"}
    return keys.union(*(keys_of(f"{{{name}#{i}}}", texts) for i in range(shards)))


def opens(prefix: str) -> bool:
    """Whether a queue opened on its own may have ``prefix`` (RWQ-KEYS-008 and RWQ-KEYS-010)."""
    return accepted(prefix, v.queue_prefix)


_NAMES = st.lists(
    st.one_of(
        st.sampled_from(("a", "jobs", "#1", "#bell", ":x", ":item", "#0}", "{t")),
        st.text("a#1:", max_size=3),
    ),
    min_size=1,
    max_size=4,
).map("".join)


@given(st.data())
def test_sharded_queues_share_no_key_with_other_queues(data: st.DataObject) -> None:
    """RWQ-KEYS-010 with RWQ-KEYS-008 suffices: a sharded queue's keys are no key of a queue that
    opens on its own, nor of another sharded queue, whatever the names and the ids."""
    name, shards = data.draw(_NAMES), data.draw(st.integers(1, 12))
    try:
        ShardLayout(name, shards)
    except InvalidArgument:
        return
    keys = sharded_keys_of(name, shards, data.draw(_TEXTS))
    other, b_ids = data.draw(_NAMES), data.draw(_TEXTS)
    other_shards = data.draw(st.integers(1, 12)) if data.draw(st.booleans()) else 0
    if other_shards:
        try:
            ShardLayout(other, other_shards)
        except InvalidArgument:
            return
        if other != name:
            assert not keys & sharded_keys_of(other, other_shards, b_ids)
        return
    index = data.draw(st.integers(0, shards))  # mostly a shard of ``name``
    plain = data.draw(st.sampled_from((other, f"{{{other}}}", f"{{{name}#{index}}}", f"{{{name}#{other}}}")))
    if opens(plain):
        event("a queue opened on its own")
        assert not keys & keys_of(plain, b_ids)


@pytest.mark.parametrize(("name", "shards"), [("jobs", 3), ("jobs#1", 2), ("a:b", 1)])
def test_the_queues_that_would_share_a_shards_keys_are_refused(name: str, shards: int) -> None:
    """The property's counterexamples without RWQ-KEYS-010, every time: ``{P#i}`` opened on its
    own has shard i's keys."""
    for i in range(shards):
        plain = f"{{{name}#{i}}}"
        assert sharded_keys_of(name, shards, ["x"]) & keys_of(plain, ["x"])
        assert not opens(plain)


def test_a_sharded_queue_opens_its_shards() -> None:
    nowhere = redis.Redis(port=1, socket_connect_timeout=0.1)
    queue = ShardedWorkQueue(nowhere, "jobs#1", shards=3)
    assert [shard.prefix for shard in queue.queues] == ["{jobs#1#0}", "{jobs#1#1}", "{jobs#1#2}"]


@pytest.mark.parametrize("prefix", NOT_SHARD_FORMS)
def test_other_forms_are_accepted(prefix: str) -> None:
    """No shard has these names: a leading zero, an index past 1023, the bell's name (the bell is
    the bare key ``{P#bell}``, no queue key), or more around the braces."""
    assert v.queue_prefix(prefix, cluster=False) == prefix
    assert WorkQueue(redis.Redis(port=1), prefix).prefix == prefix


@pytest.mark.parametrize("prefix", ACCEPTED)
def test_accepted(prefix: str) -> None:
    assert v.prefix(prefix, cluster=False) == prefix
    assert v.prefix("{t}:" + prefix, cluster=True) == "{t}:" + prefix


def snapshot(r: redis.Redis, skip: str) -> dict[bytes, bytes | None]:
    """Every key of the database that queue ``skip`` does not own, serialized with its TTL."""
    return {key: r.dump(key) for key in r.scan_iter(count=1000) if skip not in owners(key.decode(), ACCEPTED)}


def every_operation(q: WorkQueue, r: redis.Redis) -> None:
    """Run every operation of the client on ``q``, with ids that spell other queues' keys."""
    assert q.add_many([(f"n:{i}", b"N") for i in IDS]) == [True] * len(IDS)
    assert q.add("later", b"L", delay_ms=60_000)
    q.set_retry_policy(RetryPolicy(max_attempts=1, base_ms=1))
    assert q.retry_policy() is not None
    first = q.lease(30_000)
    assert first is not None
    assert first.id == "queue"
    assert q.renew(first, 30_000)
    assert q.release(first)
    held = q.lease_many(count=3, lease_ms=30_000)
    assert [h.id for h in held] == ["x:queue", "high:queue", "item:queue"]
    assert q.renew_many(held, 30_000) == [True] * 3
    assert q.complete(held[0], require_lease=True)
    assert q.complete_many(held[1:2]) == [Outcome.DONE]
    outcome, nxt = q.complete_and_lease(held[2], 30_000)
    assert outcome == Outcome.DONE
    assert nxt is not None
    assert nxt.id == "processing"
    outcomes, more = q.complete_and_lease_many([nxt], 2, 30_000)
    assert outcomes == [Outcome.DONE]
    assert [m.id for m in more] == ["dead:data", "lease:x"]
    assert q.release_many(more[:1]) == [Outcome.DONE]
    assert q.fail(more[1], "no").outcome == FailOutcome.DEAD
    assert [d.id for d in q.dead_items()] == ["lease:x"]
    assert q.dead_item("lease:x") is not None
    assert q.requeue_dead(["lease:x"]) == [True]
    blocked = q.lease(30_000, block=True, timeout_ms=100)
    assert blocked is not None
    assert blocked.id == "1"
    assert q.fail(blocked).outcome == FailOutcome.DEAD
    assert q.purge_dead(["1"]) == [True]
    r.set(f"{q.prefix}:item:orphan", b"O")  # what an older client's half-done add leaves
    assert q.deep_clean().requeued == ("orphan",)
    assert q.light_clean().requeued == ()
    assert q.counts().queued == q.queue_len() == len(IDS) + 4
    assert q.processing_len() == 0
    q.set_retry_policy(None)


def test_every_operation_stays_in_its_queue(r: redis.Redis) -> None:
    """Queues a, a:queue, a:items, a:dead, jobs and jobs:high side by side, each holding ids that
    spell the others' keys: every operation on one leaves every key of the others as it was."""
    queues = [WorkQueue(r, name) for name in ACCEPTED]
    for q in queues:
        assert q.add_many([(item_id, f"{q.prefix}/{item_id}".encode()) for item_id in IDS]) == [True] * len(
            IDS
        )
    for q in queues:
        before = snapshot(r, q.prefix)
        every_operation(q, r)
        assert snapshot(r, q.prefix) == before, q.prefix
    for key in r.scan_iter(count=1000):
        assert len(owners(key.decode(), ACCEPTED)) == 1, key
    for q in queues:  # each queue delivers its own payloads, and only them
        got = {lease.id: lease.data for lease in q.lease_many(count=100, lease_ms=30_000)}
        left = {"queue": f"{q.prefix}/queue".encode(), "dead:data": f"{q.prefix}/dead:data".encode()}
        left |= {"lease:x": f"{q.prefix}/lease:x".encode(), "orphan": b"O"}
        assert got == left | {f"n:{item_id}": b"N" for item_id in IDS}


def test_deep_clean_skips_a_nested_queues_lists(r: redis.Redis) -> None:
    """RWQ-KEYS-009: the lists, hashes and sets of queue a:item:x, made by an older client, match
    a:item:* but are no items of a."""
    r.rpush("a:item:x:queue", "7")
    r.hset("a:item:x:policy", "max_attempts", "3")
    r.sadd("a:item:x:deep_clean:r", "7")
    r.set("a:item:orphan", b"O")
    assert WorkQueue(r, "a").deep_clean(chunk=1).requeued == ("orphan",)
    assert r.lrange("a:queue", 0, -1) == [b"orphan"]


async def test_async_client_refuses_and_isolates(ar: aioredis.Redis) -> None:
    """The asyncio client applies the same rule and keeps a and a:queue apart."""
    with pytest.raises(InvalidArgument):
        AsyncWorkQueue(ar, "a:item")
    outer, inner = AsyncWorkQueue(ar, "a"), AsyncWorkQueue(ar, "a:queue")
    assert list(await asyncio.gather(outer.add("queue", b"A"), inner.add("queue", b"B"))) == [True, True]
    leased = await outer.lease(30_000)
    assert leased is not None
    assert leased.data == b"A"
    assert (await inner.counts()).queued == 1
