"""Every RWQ/1 operation through the synchronous client, against a real redis-server.

Lease expiry is driven by the frozen-clock server (``fr`` / ``frozen_server.advance``), never
by sleeping. The only sleeps order a concurrent ``add`` for the blocking-lease wake-up tests.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

import pytest
import redis

from queue_view import processing_list, queue_list
from rwq import (
    CleanReport,
    Counts,
    InvalidArgument,
    Lease,
    LeaseLost,
    Outcome,
    RedisFailure,
    RwqError,
    RwqWarning,
    WorkQueue,
    WrongType,
)
from rwq.conformance.redis_server import RedisServer
from rwq.protocol.scripts import registry

# --------------------------------------------------------------------------- helpers


class Keyspace:
    """Every key with its serialized value and TTL.

    Two snapshots are equal when the same keys hold the same values and no TTL was set, removed
    or extended (TTLs only run down between the two readings): then nothing was written.
    """

    def __init__(self, r: redis.Redis) -> None:
        self.keys = {key: (r.dump(key), r.pttl(key)) for key in sorted(r.keys("*"))}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Keyspace) or self.keys.keys() != other.keys.keys():
            return False
        for key, (value, ttl) in self.keys.items():
            other_value, other_ttl = other.keys[key]
            if value != other_value or (ttl < 0) != (other_ttl < 0):
                return False
            if ttl >= 0 and abs(ttl - other_ttl) > 2000:
                return False
        return True

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Keyspace({self.keys!r})"


def keyspace(r: redis.Redis) -> Keyspace:
    return Keyspace(r)


def script_calls(r: redis.Redis) -> int:
    """EVALSHA + EVAL calls the server has executed so far."""
    stats = r.info("commandstats")
    return sum(int(stats.get(f"cmdstat_{name}", {}).get("calls", 0)) for name in ("evalsha", "eval"))


def eval_calls(r: redis.Redis) -> int:
    return int(r.info("commandstats").get("cmdstat_eval", {}).get("calls", 0))


def new_prefix() -> str:
    return f"test:{{{uuid.uuid4().hex[:12]}}}"


@pytest.fixture
def other(r: redis.Redis, redis_server: RedisServer, prefix: str) -> Iterator[WorkQueue]:
    """A second worker on the same queue, on its own connection."""
    client = redis_server.client()
    yield WorkQueue(client, prefix)
    client.close()


@pytest.fixture
def fq(fr: redis.Redis, prefix: str) -> WorkQueue:
    """A queue on the frozen-clock server."""
    return WorkQueue(fr, prefix)


@pytest.fixture
def fother(frozen_server: RedisServer, fr: redis.Redis, prefix: str) -> Iterator[WorkQueue]:
    client = frozen_server.client()
    yield WorkQueue(client, prefix)
    client.close()


# --------------------------------------------------------------------------- add / add_many


def test_add_creates_item_and_queues_it(r: redis.Redis, queue: WorkQueue) -> None:
    assert queue.add("a", b"payload \x00\xff") is True
    assert r.get(queue.keys.item("a")) == b"payload \x00\xff"
    assert queue_list(r, queue) == ["a"]
    assert processing_list(r, queue) == []


def test_add_is_idempotent_by_id(r: redis.Redis, queue: WorkQueue) -> None:
    assert queue.add("a", b"first") is True
    before = keyspace(r)
    assert queue.add("a", b"second") is False
    assert keyspace(r) == before
    assert r.get(queue.keys.item("a")) == b"first"
    assert queue.counts() == Counts(queued=1, processing=0)


def test_add_while_leased_does_not_requeue(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add("a", b"A")
    held = queue.lease(10_000)
    assert held is not None
    assert queue.add("a", b"other") is False
    assert queue.counts() == Counts(queued=0, processing=1)
    assert r.get(queue.keys.item("a")) == b"A"


def test_add_after_complete_adds_again(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add("a", b"1")
    assert queue.complete("a") is True
    assert queue.add("a", b"2") is True
    assert r.get(queue.keys.item("a")) == b"2"
    assert queue_list(r, queue) == ["a"]


def test_add_accepts_bytearray_and_memoryview(r: redis.Redis, queue: WorkQueue) -> None:
    assert queue.add("a", bytearray(b"ba")) is True  # type: ignore[arg-type]
    assert queue.add("b", memoryview(b"mv")) is True  # type: ignore[arg-type]
    assert r.get(queue.keys.item("a")) == b"ba"
    assert r.get(queue.keys.item("b")) == b"mv"


def test_add_empty_payload_and_unicode_id(r: redis.Redis, queue: WorkQueue) -> None:
    item_id = "jöb-✓-" + "x" * 100
    assert queue.add(item_id, b"") is True
    held = queue.lease(1000)
    assert held is not None
    assert (held.id, held.data) == (item_id, b"")
    assert r.exists(queue.keys.item(item_id)) == 1


def test_add_id_of_exactly_512_bytes(queue: WorkQueue) -> None:
    item_id = "é" * 256  # 512 bytes of UTF-8
    assert queue.add(item_id, b"x") is True
    held = queue.lease(1000)
    assert held is not None
    assert held.id == item_id


def test_add_many_reports_per_item(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add("b", b"old")
    assert queue.add_many([("a", b"A"), ("b", b"B"), ("c", b"C")]) == [True, False, True]
    assert r.get(queue.keys.item("b")) == b"old"
    assert queue.counts().queued == 3


def test_add_many_duplicate_within_one_batch(r: redis.Redis, queue: WorkQueue) -> None:
    assert queue.add_many([("a", b"1"), ("b", b"2"), ("a", b"3")]) == [True, True, False]
    assert r.get(queue.keys.item("a")) == b"1"
    assert sorted(queue_list(r, queue)) == ["a", "b"]


def test_add_many_empty_is_a_no_op(r: redis.Redis, queue: WorkQueue) -> None:
    before = script_calls(r)
    assert queue.add_many([]) == []
    assert r.dbsize() == 0
    assert script_calls(r) == before


def test_add_many_accepts_a_generator(queue: WorkQueue) -> None:
    assert queue.add_many((f"g{i}", b"x") for i in range(3)) == [True] * 3
    assert queue.queue_len() == 3


def test_add_many_over_1000_is_split_into_several_calls(r: redis.Redis, queue: WorkQueue) -> None:
    items = [(f"i{n:05d}", str(n).encode()) for n in range(2500)]
    items.append(("i00007", b"duplicate across chunks"))
    queue.counts()  # the first call also checks the server; keep it out of the count below
    before = script_calls(r)
    result = queue.add_many(items)
    assert script_calls(r) - before == 3
    assert result == [True] * 2500 + [False]
    assert queue.queue_len() == 2500
    assert r.get(queue.keys.item("i00007")) == b"7"


def test_fifo_order_across_add_and_add_many(queue: WorkQueue) -> None:
    queue.add("first", b"")
    queue.add_many([(f"m{i}", b"") for i in range(1200)])
    queue.add("last", b"")
    expected = ["first", *(f"m{i}" for i in range(1200)), "last"]
    leased = queue.lease_many(count=1000, lease_ms=10_000) + queue.lease_many(count=1000, lease_ms=10_000)
    assert [held.id for held in leased] == expected
    assert queue.lease(1000) is None


# --------------------------------------------------------------------------- lease


def test_lease_returns_none_on_empty_queue(r: redis.Redis, queue: WorkQueue) -> None:
    assert queue.lease(1000) is None
    assert queue.lease_many(count=5, lease_ms=1000) == []
    assert r.dbsize() == 0


def test_lease_moves_item_and_sets_token_with_ttl(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add("a", b"A")
    held = queue.lease(5000)
    assert held is not None
    assert (held.id, held.data) == ("a", b"A")
    assert len(held.token) == 32
    assert r.get(queue.keys.lease("a")) == held.token.encode()
    assert 4000 < r.pttl(queue.keys.lease("a")) <= 5000
    assert r.exists(queue.keys.legacy_lease("a")) == 0
    assert queue_list(r, queue) == []
    assert processing_list(r, queue) == ["a"]


def test_each_lease_has_a_fresh_token(queue: WorkQueue) -> None:
    queue.add_many([("a", b""), ("b", b"")])
    first, second = queue.lease(1000), queue.lease(1000)
    assert first is not None
    assert second is not None
    assert first.token != second.token


def test_lease_drops_ghosts_never_hands_them_out(r: redis.Redis, queue: WorkQueue) -> None:
    r.rpush(queue.keys.queue, "ghost1")  # tail: would be leased first
    queue.add("real", b"R")
    r.rpush(queue.keys.queue, "ghost2")
    held = queue.lease(1000)
    assert held is not None
    assert held.id == "real"
    assert queue_list(r, queue) == []
    assert processing_list(r, queue) == ["real"]
    assert r.exists(queue.keys.lease("ghost1"), queue.keys.lease("ghost2")) == 0


def test_lease_only_ghosts_returns_none(r: redis.Redis, queue: WorkQueue) -> None:
    r.rpush(queue.keys.queue, "g1", "g2")
    assert queue.lease(1000) is None
    assert r.dbsize() == 0


def test_lease_skips_more_than_1000_ghosts(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add("real", b"R")
    r.rpush(queue.keys.queue, *(f"ghost{i}" for i in range(1500)))
    held = queue.lease(1000)
    assert held is not None
    assert held.id == "real"
    assert queue.counts() == Counts(queued=0, processing=1)


def test_lease_many_skips_more_than_1000_ghosts(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add_many([("a", b""), ("b", b"")])
    r.rpush(queue.keys.queue, *(f"ghost{i}" for i in range(2100)))
    leased = queue.lease_many(count=10, lease_ms=1000)
    assert [held.id for held in leased] == ["a", "b"]
    assert queue.counts() == Counts(queued=0, processing=2)


def test_lease_skips_duplicate_of_item_held_elsewhere(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add_many([("a", b"A"), ("b", b"B")])
    held = queue.lease(60_000)
    assert held is not None
    assert held.id == "a"
    r.rpush(queue.keys.queue, "a")  # a stray duplicate of the held id, next in line
    nxt = queue.lease(60_000)
    assert nxt is not None
    assert nxt.id == "b"
    assert processing_list(r, queue) == ["b", "a"]
    assert queue_list(r, queue) == []
    assert r.get(queue.keys.lease("a")) == held.token.encode()


def test_lease_skips_item_held_under_legacy_key(r: redis.Redis, queue: WorkQueue) -> None:
    """RWQ-LEASE-005: a held item is skipped; its only entry stays in processing (the holder,
    here a PyPI 0.1.5 worker whose entry a cleaner requeued, still needs it to complete)."""
    queue.add_many([("a", b"A"), ("b", b"B")])
    r.set(queue.keys.legacy_lease("a"), "g1-session", px=60_000)
    held = queue.lease(1000)
    assert held is not None
    assert held.id == "b"
    assert r.exists(queue.keys.lease("a")) == 0
    assert r.get(queue.keys.legacy_lease("a")) == b"g1-session"
    assert processing_list(r, queue) == ["b", "a"]
    assert queue_list(r, queue) == []


def test_lease_inside_foreign_non_atomic_lease_keeps_holders_entry(r: redis.Redis, queue: WorkQueue) -> None:
    """A G1 worker pops the id, a G2 cleaner requeues it before the G1 SETEX, then we lease."""
    queue.add("a", b"A")
    r.rpoplpush(queue.keys.queue, queue.keys.processing)  # G1 lease, step 1
    r.lrem(queue.keys.processing, 0, "a")  # G2 cleaner: no :lease: key, so ...
    r.lpush(queue.keys.queue, "a")  # ... requeue
    r.set(queue.keys.legacy_lease("a"), "g1-session", ex=60)  # G1 lease, step 2
    assert queue.lease(1000) is None
    assert processing_list(r, queue) == ["a"]  # the G1 holder can still complete it
    assert r.lrem(queue.keys.processing, 0, "a") == 1  # as G1's complete does


def test_add_deletes_stale_lease_keys_of_an_earlier_item(r: redis.Redis, queue: WorkQueue) -> None:
    """RWQ-ADD-006: older clients' complete leaves a lease key behind; a new item must not
    inherit it."""
    queue.add("a", b"old")
    held = queue.lease(60_000)
    assert held is not None
    r.set(queue.keys.legacy_lease("a"), "g1", px=60_000)
    r.lrem(queue.keys.processing, 0, "a")  # a G1 complete: LREM, DEL data, DEL legacy lease ...
    r.delete(queue.keys.item("a"))  # ... but our :lease: key stays
    assert r.exists(queue.keys.lease("a")) == 1
    assert queue.add("a", b"new") is True
    assert r.exists(queue.keys.lease("a"), queue.keys.legacy_lease("a")) == 0
    again = queue.lease(1000)
    assert again is not None
    assert again.data == b"new"
    assert queue.renew(held, 1000) is False  # the old token holds nothing


def test_lease_many_in_fifo_order(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add_many([(f"i{n}", bytes([n])) for n in range(5)])
    leased = queue.lease_many(count=3, lease_ms=1000)
    assert [(held.id, held.data) for held in leased] == [("i0", b"\x00"), ("i1", b"\x01"), ("i2", b"\x02")]
    assert len({held.token for held in leased}) == 1  # one call, one token
    assert processing_list(r, queue) == ["i2", "i1", "i0"]
    assert queue_list(r, queue) == ["i4", "i3"]
    rest = queue.lease_many(count=1000, lease_ms=1000)
    assert [held.id for held in rest] == ["i3", "i4"]


def test_lease_many_count_bounds(queue: WorkQueue) -> None:
    queue.add_many([(f"i{n}", b"") for n in range(1001)])
    assert len(queue.lease_many(count=1, lease_ms=1000)) == 1
    assert len(queue.lease_many(count=1000, lease_ms=1000)) == 1000
    assert queue.lease_many(count=1000, lease_ms=1000) == []


def test_blocking_lease_returns_ready_item_at_once(queue: WorkQueue) -> None:
    queue.add("a", b"A")
    started = time.monotonic()
    held = queue.lease(1000, block=True, timeout_ms=5000)
    assert held is not None
    assert held.id == "a"
    assert time.monotonic() - started < 1


def test_blocking_lease_wakes_up_when_another_client_adds(
    r: redis.Redis, queue: WorkQueue, other: WorkQueue
) -> None:
    queue.counts()
    timer = threading.Timer(0.2, lambda: other.add("late", b"L"))
    started = time.monotonic()
    timer.start()
    try:
        held = queue.lease(5000, block=True, timeout_ms=10_000)
    finally:
        timer.join()
    elapsed = time.monotonic() - started
    assert held is not None
    assert (held.id, held.data) == ("late", b"L")
    assert 0.15 < elapsed < 5
    assert r.get(queue.keys.lease("late")) == held.token.encode()
    assert processing_list(r, queue) == ["late"]


def test_blocking_lease_without_limit_wakes_up(r: redis.Redis, queue: WorkQueue, other: WorkQueue) -> None:
    timer = threading.Timer(0.2, lambda: other.add("late", b"L"))
    timer.start()
    try:
        held = queue.lease(5000, block=True)  # timeout_ms=0: no limit
    finally:
        timer.join()
    assert held is not None
    assert held.id == "late"


def test_blocking_lease_timeout_returns_none(r: redis.Redis, queue: WorkQueue) -> None:
    started = time.monotonic()
    assert queue.lease(1000, block=True, timeout_ms=300) is None
    elapsed = time.monotonic() - started
    assert 0.25 < elapsed < 3
    assert r.dbsize() == 0


def test_blocking_lease_skips_ghost_and_keeps_waiting(
    r: redis.Redis, queue: WorkQueue, other: WorkQueue
) -> None:
    def produce() -> None:
        r.lpush(queue.keys.queue, "ghost")
        time.sleep(0.1)
        other.add("real", b"R")

    timer = threading.Timer(0.2, produce)
    timer.start()
    try:
        held = queue.lease(1000, block=True, timeout_ms=10_000)
    finally:
        timer.join()
    assert held is not None
    assert held.id == "real"
    assert processing_list(r, queue) == ["real"]
    assert r.exists(queue.keys.lease("ghost")) == 0


def test_blocking_lease_ghost_then_timeout(r: redis.Redis, queue: WorkQueue) -> None:
    timer = threading.Timer(0.1, lambda: r.lpush(queue.keys.queue, "ghost"))
    timer.start()
    try:
        assert queue.lease(1000, block=True, timeout_ms=500) is None
    finally:
        timer.join()
    assert r.dbsize() == 0


# --------------------------------------------------------------------------- renew


def test_renew_extends_lease(fr: redis.Redis, fq: WorkQueue, frozen_server: RedisServer) -> None:
    fq.add("a", b"A")
    held = fq.lease(1000)
    assert held is not None
    frozen_server.advance(800)
    assert fq.renew(held, 5000) is True
    assert 4990 < fr.pttl(fq.keys.lease("a")) <= 5000
    assert fr.get(fq.keys.lease("a")) == held.token.encode()
    frozen_server.advance(3000)  # past the original 1000 ms, within the renewed 5000
    assert fq.renew(held, 1000) is True
    assert fq.light_clean().requeued == ()


def test_renew_false_after_expiry(fr: redis.Redis, fq: WorkQueue, frozen_server: RedisServer) -> None:
    fq.add("a", b"A")
    held = fq.lease(1000)
    assert held is not None
    frozen_server.advance(1100)
    assert fr.exists(fq.keys.lease("a")) == 0
    assert fq.renew(held, 1000) is False
    assert fr.exists(fq.keys.lease("a")) == 0  # an expired lease is not resurrected
    assert fq.light_clean().requeued == ("a",)


def test_renew_false_after_another_worker_took_over(
    fr: redis.Redis, fq: WorkQueue, fother: WorkQueue, frozen_server: RedisServer
) -> None:
    fq.add("a", b"A")
    stale = fq.lease(1000)
    assert stale is not None
    frozen_server.advance(1500)
    assert fq.light_clean().requeued == ("a",)
    fresh = fother.lease(1000)
    assert fresh is not None
    assert fresh.id == "a"
    assert fq.renew(stale, 60_000) is False
    assert fr.get(fq.keys.lease("a")) == fresh.token.encode()
    assert fr.pttl(fq.keys.lease("a")) <= 1000
    assert fother.renew(fresh, 60_000) is True


def test_renew_checks_the_token(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add("a", b"A")
    held = queue.lease(5000)
    assert held is not None
    forged = Lease("a", b"A", "0" * 32)
    before = keyspace(r)
    assert queue.renew(forged, 60_000) is False
    assert keyspace(r) == before


def test_renew_false_after_complete(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add("a", b"A")
    held = queue.lease(5000)
    assert held is not None
    queue.complete("a")
    assert queue.renew(held, 5000) is False
    assert r.dbsize() == 0


def test_renew_false_when_item_deleted_under_the_lease(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add("a", b"A")
    held = queue.lease(5000)
    assert held is not None
    r.delete(queue.keys.item("a"))  # a G1 complete deletes the data, not the :lease: key
    assert queue.renew(held, 60_000) is False
    assert r.pttl(queue.keys.lease("a")) <= 5000


def test_renew_many_mixed(
    fr: redis.Redis, fq: WorkQueue, fother: WorkQueue, frozen_server: RedisServer
) -> None:
    fq.add_many([("a", b""), ("b", b""), ("c", b"")])
    a = fq.lease(1000)
    b = fq.lease(60_000)
    c = fq.lease(60_000)
    assert a is not None
    assert b is not None
    assert c is not None
    fq.complete("c")
    frozen_server.advance(1500)
    assert fq.renew_many([a, b, c], 10_000) == [False, True, False]
    assert 9990 < fr.pttl(fq.keys.lease("b")) <= 10_000
    assert fq.renew_many([], 1000) == []


def test_renew_many_over_1000(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add_many([(f"i{n}", b"") for n in range(1200)])
    leased = queue.lease_many(count=1000, lease_ms=1000) + queue.lease_many(count=200, lease_ms=1000)
    stale = Lease("i5", b"", "f" * 32)
    result = queue.renew_many([*leased, stale], 50_000)
    assert result == [True] * 1200 + [False]
    assert r.pttl(queue.keys.lease("i1199")) > 40_000


# --------------------------------------------------------------------------- complete


def test_complete_first_completer_wins_exactly_once(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add("a", b"A")
    held = queue.lease(5000)
    assert held is not None
    assert queue.complete(held) is True
    assert queue.complete(held) is False
    assert queue.complete("a") is False
    assert r.dbsize() == 0


def test_complete_concurrent_completers_one_winner(redis_server: RedisServer, queue: WorkQueue) -> None:
    queue.add_many([(f"i{n}", b"") for n in range(20)])
    leased = queue.lease_many(count=20, lease_ms=60_000)
    barrier = threading.Barrier(8)
    wins: list[str] = []
    lock = threading.Lock()

    def completer() -> None:
        client = redis_server.client()
        q = WorkQueue(client, queue.prefix)
        barrier.wait()
        for held in leased:
            if q.complete(held):
                with lock:
                    wins.append(held.id)
        client.close()

    threads = [threading.Thread(target=completer) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(wins) == sorted(held.id for held in leased)
    assert queue.counts() == Counts(0, 0)


def test_complete_removes_processing_entry_and_both_lease_keys(r: redis.Redis, prefix: str) -> None:
    q = WorkQueue(r, prefix, legacy_lease_key=True)
    q.add_many([("a", b"A"), ("b", b"B")])
    held = q.lease(5000)
    assert held is not None
    assert r.exists(q.keys.lease("a"), q.keys.legacy_lease("a")) == 2
    assert q.complete(held) is True
    assert r.exists(q.keys.item("a"), q.keys.lease("a"), q.keys.legacy_lease("a")) == 0
    assert processing_list(r, q) == []
    assert queue_list(r, q) == ["b"]
    assert sorted(r.keys("*")) == sorted([q.keys.queue, q.keys.item("b")])


def test_complete_deletes_leftover_legacy_key(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add("a", b"A")
    held = queue.lease(5000)
    assert held is not None
    r.set(queue.keys.legacy_lease("a"), "g1", px=60_000)
    assert queue.complete("a") is True
    assert r.dbsize() == 0


def test_complete_item_a_cleaner_requeued_removes_queued_copy(
    fr: redis.Redis, fq: WorkQueue, frozen_server: RedisServer
) -> None:
    fq.add_many([("a", b"A"), ("b", b"B")])
    held = fq.lease(1000)
    assert held is not None
    assert held.id == "a"
    frozen_server.advance(1500)
    assert fq.light_clean().requeued == ("a",)
    assert queue_list(fr, fq) == ["a", "b"]
    assert fq.complete(held) is True
    assert queue_list(fr, fq) == ["b"]
    assert processing_list(fr, fq) == []
    assert fr.exists(fq.keys.item("a")) == 0
    nxt = fq.lease(1000)
    assert nxt is not None
    assert nxt.id == "b"
    assert fq.lease(1000) is None


def test_complete_queued_item_by_id(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add_many([("a", b""), ("b", b""), ("c", b"")])
    assert queue.complete("b") is True
    assert queue_list(r, queue) == ["c", "a"]
    assert r.exists(queue.keys.item("b")) == 0


def test_complete_unknown_id_is_false_and_writes_nothing(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add("a", b"A")
    before = keyspace(r)
    assert queue.complete("nope") is False
    assert keyspace(r) == before


def test_complete_require_lease_by_holder(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add("a", b"A")
    held = queue.lease(5000)
    assert held is not None
    assert queue.complete(held, require_lease=True) is True
    assert r.dbsize() == 0


def test_complete_require_lease_stale_raises_and_changes_nothing(
    fr: redis.Redis, fq: WorkQueue, fother: WorkQueue, frozen_server: RedisServer
) -> None:
    fq.add("a", b"A")
    stale = fq.lease(1000)
    assert stale is not None
    frozen_server.advance(1500)
    fq.light_clean()
    fresh = fother.lease(60_000)
    assert fresh is not None
    assert fresh.id == "a"
    before = keyspace(fr)
    with pytest.raises(LeaseLost) as info:
        fq.complete(stale, require_lease=True)
    assert info.value.code == "LEASE_LOST"
    assert "a" in str(info.value)
    assert keyspace(fr) == before
    assert fother.complete(fresh, require_lease=True) is True
    assert fr.dbsize() == 0


def test_complete_require_lease_after_expiry_raises(
    fr: redis.Redis, fq: WorkQueue, frozen_server: RedisServer
) -> None:
    fq.add("a", b"A")
    held = fq.lease(1000)
    assert held is not None
    frozen_server.advance(1100)
    before = keyspace(fr)
    with pytest.raises(LeaseLost):
        fq.complete(held, require_lease=True)
    assert keyspace(fr) == before
    assert fr.exists(fq.keys.item("a")) == 1


def test_complete_require_lease_after_completion_raises(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add("a", b"A")
    held = queue.lease(5000)
    assert held is not None
    assert queue.complete("a") is True
    with pytest.raises(LeaseLost):
        queue.complete(held, require_lease=True)
    assert r.dbsize() == 0


def test_complete_many_outcomes(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add_many([("a", b""), ("b", b""), ("c", b"")])
    a, b = queue.lease(5000), queue.lease(5000)
    assert a is not None
    assert b is not None
    forged = Lease("b", b"", "0" * 32)
    assert queue.complete_many([a, forged], require_lease=True) == [Outcome.DONE, Outcome.LEASE_LOST]
    assert queue.complete_many([b, "c", "missing", "a"]) == [
        Outcome.DONE,
        Outcome.DONE,
        Outcome.GONE,
        Outcome.GONE,
    ]
    assert r.dbsize() == 0
    assert queue.complete_many([]) == []


def test_complete_many_over_1000(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add_many([(f"i{n}", b"") for n in range(1100)])
    leased = queue.lease_many(count=1000, lease_ms=60_000) + queue.lease_many(count=100, lease_ms=60_000)
    before = script_calls(r)
    outcomes = queue.complete_many(leased, require_lease=True)
    assert script_calls(r) - before == 2
    assert outcomes == [Outcome.DONE] * 1100
    assert r.dbsize() == 0


def test_complete_many_ids_over_1000(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add_many([(f"i{n}", b"") for n in range(1500)])
    outcomes = queue.complete_many([f"i{n}" for n in range(1500)])
    assert outcomes == [Outcome.DONE] * 1500
    assert r.dbsize() == 0


# --------------------------------------------------------------------------- complete_and_lease


def test_complete_and_lease_completes_then_leases_the_next_in_one_call(
    r: redis.Redis, queue: WorkQueue
) -> None:
    queue.add_many([("a", b"A"), ("b", b"B"), ("c", b"C")])
    held = queue.lease(5000)
    assert held is not None
    r.script_load(registry()["complete_and_lease"].source)  # no NOSCRIPT retry in the count
    before = script_calls(r)
    outcome, following = queue.complete_and_lease(held, 7000, require_lease=True)
    assert script_calls(r) - before == 1
    assert outcome is Outcome.DONE
    assert following is not None
    assert (following.id, following.data, following.attempt) == ("b", b"B", 0)
    assert following.token != held.token
    assert r.get(queue.keys.lease("b")) == following.token.encode()
    assert 6000 < r.pttl(queue.keys.lease("b")) <= 7000
    assert r.exists(queue.keys.item("a"), queue.keys.lease("a")) == 0
    assert (queue_list(r, queue), processing_list(r, queue)) == (["c"], ["b"])


def test_complete_and_lease_of_the_last_item_leaves_nothing(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add("a", b"A")
    held = queue.lease(5000)
    assert held is not None
    assert queue.complete_and_lease(held, 5000) == (Outcome.DONE, None)
    assert queue.complete_and_lease("a", 5000) == (Outcome.GONE, None)
    assert r.dbsize() == 0


def test_complete_and_lease_reports_a_lost_lease_and_still_leases(
    fr: redis.Redis, fq: WorkQueue, frozen_server: RedisServer
) -> None:
    fq.add_many([("a", b"A"), ("b", b"B")])
    held = fq.lease(1000)
    assert held is not None
    frozen_server.advance(1500)
    outcome, following = fq.complete_and_lease(held, 5000, require_lease=True)
    assert outcome is Outcome.LEASE_LOST
    assert following is not None
    assert following.id == "b"
    assert fr.get(fq.keys.item("a")) == b"A"
    assert processing_list(fr, fq) == ["b", "a"]


def test_complete_and_lease_many_outcomes_in_order_and_one_token(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add_many([(n, n.encode()) for n in "abcdef"])
    first = queue.lease_many(count=2, lease_ms=5000)
    outcomes, leases = queue.complete_and_lease_many([*first, "zz"], 3, 5000)
    assert outcomes == [Outcome.DONE, Outcome.DONE, Outcome.GONE]
    assert [held.id for held in leases] == ["c", "d", "e"]
    stored = {r.get(queue.keys.lease(held.id)) for held in leases}
    assert stored == {leases[0].token.encode()}  # one token for the whole lease part
    assert (queue_list(r, queue), processing_list(r, queue)) == (["f"], ["e", "d", "c"])


def test_complete_and_lease_goes_on_past_1000_skipped_entries(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add("a", b"A")
    held = queue.lease(5000)
    assert held is not None
    r.rpush(queue.keys.queue, *(f"ghost{n}" for n in range(1001)))
    queue.add("b", b"B")
    r.script_load(registry()["complete_and_lease"].source)
    before = script_calls(r)
    outcome, following = queue.complete_and_lease(held, 5000)
    assert script_calls(r) - before == 2  # the lease part stopped after 1000 skips; then lease
    assert outcome is Outcome.DONE
    assert following is not None
    assert following.id == "b"
    assert queue_list(r, queue) == []


@pytest.mark.parametrize(
    "call",
    [
        (["a"], 1, 0, False),
        (["a"], 1, 31_536_000_001, False),
        (["a"], 0, 5000, False),
        (["a"], 1001, 5000, False),
        ([], 1, 5000, False),
        ([f"i{n}" for n in range(1001)], 1, 5000, False),
        (["a", ""], 1, 5000, False),
        ("ab", 1, 5000, False),
        (["a"], 1, 5000, True),  # require_lease needs leases, not ids
    ],
)
def test_complete_and_lease_invalid_arguments_send_nothing(
    r: redis.Redis, queue: WorkQueue, call: tuple[list[str], int, int, bool]
) -> None:
    queue.add_many([("a", b"A"), ("b", b"B")])
    assert queue.lease(5000) is not None
    before, calls = keyspace(r), script_calls(r)
    items, count, lease_ms, require_lease = call
    with pytest.raises(InvalidArgument):
        queue.complete_and_lease_many(items, count, lease_ms, require_lease=require_lease)
    assert script_calls(r) == calls
    assert keyspace(r) == before


# --------------------------------------------------------------------------- release


def test_release_puts_item_at_queue_tail(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add_many([("a", b"A"), ("b", b"B")])
    held = queue.lease(5000)
    assert held is not None
    assert held.id == "a"
    assert queue.release(held) is True
    assert queue_list(r, queue) == ["a", "b"]  # behind b, as a new item would be
    assert processing_list(r, queue) == []
    assert r.exists(queue.keys.lease("a")) == 0
    assert r.get(queue.keys.item("a")) == b"A"
    assert [h.id for h in queue.lease_many(count=2, lease_ms=1000)] == ["b", "a"]


def test_release_deletes_both_lease_keys(r: redis.Redis, prefix: str) -> None:
    q = WorkQueue(r, prefix, legacy_lease_key=True)
    q.add("a", b"A")
    held = q.lease(5000)
    assert held is not None
    assert q.release(held) is True
    assert r.exists(q.keys.lease("a"), q.keys.legacy_lease("a")) == 0
    assert queue_list(r, q) == ["a"]


def test_release_not_holder_raises_and_changes_nothing(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add("a", b"A")
    held = queue.lease(5000)
    assert held is not None
    before = keyspace(r)
    with pytest.raises(LeaseLost) as info:
        queue.release(Lease("a", b"A", "0" * 32))
    assert info.value.code == "LEASE_LOST"
    assert keyspace(r) == before


def test_release_after_takeover_raises(
    fr: redis.Redis, fq: WorkQueue, fother: WorkQueue, frozen_server: RedisServer
) -> None:
    fq.add("a", b"A")
    stale = fq.lease(1000)
    assert stale is not None
    frozen_server.advance(1500)
    fq.light_clean()
    fresh = fother.lease(60_000)
    assert fresh is not None
    before = keyspace(fr)
    with pytest.raises(LeaseLost):
        fq.release(stale)
    assert keyspace(fr) == before


def test_release_false_when_item_deleted_by_legacy_complete(r: redis.Redis, queue: WorkQueue) -> None:
    """A G1 complete deletes the data (and :leased_by_session:) but leaves our :lease: key."""
    queue.add("a", b"A")
    held = queue.lease(5000)
    assert held is not None
    r.delete(queue.keys.item("a"))
    r.lrem(queue.keys.processing, 0, "a")
    assert queue.release(held) is False
    assert r.dbsize() == 0  # the lease is cleared and no ghost id is queued


def test_release_false_when_item_completed_meanwhile(r: redis.Redis, queue: WorkQueue) -> None:
    """WorkQueue.release: "False if it had been completed meanwhile" (also the brief for issue 2)."""
    queue.add("a", b"A")
    held = queue.lease(5000)
    assert held is not None
    assert queue.complete("a") is True  # someone else completes it while we hold the lease
    assert queue.release(held) is False
    assert r.dbsize() == 0


def test_release_many_outcomes(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add_many([("a", b""), ("b", b""), ("c", b"")])
    leased = queue.lease_many(count=3, lease_ms=5000)
    a, _b, c = leased
    r.delete(queue.keys.item("c"))
    outcomes = queue.release_many([a, Lease("b", b"", "0" * 32), c])
    assert outcomes == [Outcome.DONE, Outcome.LEASE_LOST, Outcome.GONE]
    assert queue_list(r, queue) == ["a"]
    assert processing_list(r, queue) == ["b"]
    assert queue.release_many([]) == []


# --------------------------------------------------------------------------- counts


def test_counts_queue_len_processing_len(r: redis.Redis, queue: WorkQueue) -> None:
    assert queue.counts() == Counts(queued=0, processing=0)
    queue.add_many([(f"i{n}", b"") for n in range(5)])
    queue.lease_many(count=2, lease_ms=5000)
    assert queue.counts() == Counts(queued=3, processing=2)
    assert queue.queue_len() == 3 == r.llen(queue.keys.queue)
    assert queue.processing_len() == 2 == r.llen(queue.keys.processing)


def test_counts_count_list_entries_including_ghosts(r: redis.Redis, queue: WorkQueue) -> None:
    r.lpush(queue.keys.queue, "ghost")  # SPEC: LLEN of the lists, nothing else
    assert queue.counts() == Counts(queued=1, processing=0)


def test_counts_writes_nothing(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add("a", b"")
    queue.lease(5000)
    before = keyspace(r)
    queue.counts()
    assert keyspace(r) == before


def test_queues_with_different_prefixes_are_independent(r: redis.Redis, queue: WorkQueue) -> None:
    elsewhere = WorkQueue(r, new_prefix())
    queue.add("a", b"mine")
    assert elsewhere.add("a", b"theirs") is True
    assert elsewhere.lease(1000) is not None
    assert queue.counts() == Counts(1, 0)
    held = queue.lease(1000)
    assert held is not None
    assert held.data == b"mine"


# --------------------------------------------------------------------------- light_clean


def test_light_clean_requeues_only_abandoned(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add_many([(name, name.encode()) for name in ("live", "legacy", "abandoned", "ghost")])
    queue.lease_many(count=4, lease_ms=60_000)
    r.delete(queue.keys.lease("legacy"))
    r.set(queue.keys.legacy_lease("legacy"), "g1-session", px=60_000)
    r.delete(queue.keys.lease("abandoned"))
    r.delete(queue.keys.lease("ghost"), queue.keys.item("ghost"))
    report = queue.light_clean()
    assert report == CleanReport(requeued=("abandoned",), dropped=1)
    assert queue_list(r, queue) == ["abandoned"]
    assert processing_list(r, queue) == ["legacy", "live"]
    assert r.exists(queue.keys.lease("abandoned")) == 0
    nxt = queue.lease(1000)
    assert nxt is not None
    assert (nxt.id, nxt.data) == ("abandoned", b"abandoned")


def test_light_clean_after_expiry(fr: redis.Redis, fq: WorkQueue, frozen_server: RedisServer) -> None:
    fq.add_many([("short", b""), ("long", b"")])
    short = fq.lease(1000)
    long = fq.lease(10_000)
    assert short is not None
    assert long is not None
    assert fq.light_clean().requeued == ()
    frozen_server.advance(1500)
    assert fq.light_clean() == CleanReport(("short",), 0)
    assert processing_list(fr, fq) == ["long"]
    assert fq.light_clean().requeued == ()
    frozen_server.advance(10_000)
    assert fq.light_clean().requeued == ("long",)


def test_light_clean_empty_and_idempotent(r: redis.Redis, queue: WorkQueue) -> None:
    assert queue.light_clean() == CleanReport((), 0)
    queue.add("a", b"")
    queue.lease(60_000)
    before = keyspace(r)
    assert queue.light_clean() == CleanReport((), 0)
    assert keyspace(r) == before


def abandon(r: redis.Redis, queue: WorkQueue, pattern: str) -> list[str]:
    """Lease one item per letter of ``pattern`` (oldest first); 'A' abandons it, 'L' keeps a lease."""
    names = [f"{kind}{n}" for n, kind in enumerate(pattern)]
    queue.add_many([(name, b"") for name in names])
    queue.lease_many(count=len(names), lease_ms=60_000)
    for name in names:
        if name.startswith("A"):
            r.delete(queue.keys.lease(name))
    return names


def test_light_clean_chunked_mixed(r: redis.Redis, queue: WorkQueue) -> None:
    names = abandon(r, queue, "LALAAL")
    queue.counts()
    before = script_calls(r)
    report = queue.light_clean(chunk=2)
    assert script_calls(r) - before >= 3
    assert report.requeued == ("A1", "A3", "A4")  # oldest first
    assert report.dropped == 0
    assert processing_list(r, queue) == ["L5", "L2", "L0"]
    assert queue_list(r, queue) == ["A4", "A3", "A1"]
    assert len(names) == 6


def test_light_clean_chunked_with_ghosts(r: redis.Redis, queue: WorkQueue) -> None:
    abandon(r, queue, "LAGLGA")
    r.delete(queue.keys.lease("G2"), queue.keys.item("G2"), queue.keys.lease("G4"), queue.keys.item("G4"))
    report = queue.light_clean(chunk=2)
    assert report == CleanReport(("A1", "A5"), 2)
    assert processing_list(r, queue) == ["L3", "L0"]


def test_light_clean_chunked_when_oldest_chunk_is_all_abandoned(r: redis.Redis, queue: WorkQueue) -> None:
    """The oldest ``chunk`` entries are all requeued, so nothing is kept and the cursor stays 0."""
    abandon(r, queue, "AALAA")
    report = queue.light_clean(chunk=2)
    assert sorted(report.requeued) == ["A0", "A1", "A3", "A4"]
    assert processing_list(r, queue) == ["L2"]


def test_light_clean_chunk_one_all_abandoned(r: redis.Redis, queue: WorkQueue) -> None:
    abandon(r, queue, "AAA")
    report = queue.light_clean(chunk=1)
    assert report.requeued == ("A0", "A1", "A2")
    assert processing_list(r, queue) == []


def test_light_clean_large_processing_list(r: redis.Redis, queue: WorkQueue) -> None:
    pattern = "LA" * 150
    abandon(r, queue, pattern)
    report = queue.light_clean(chunk=7)
    assert len(report.requeued) == 150
    assert queue.counts() == Counts(150, 150)


# --------------------------------------------------------------------------- deep_clean


def test_deep_clean_finds_orphans_and_ghosts(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add_many([("listed", b""), ("leased", b""), ("abandoned", b""), ("g1held", b"")])
    leased = queue.lease_many(count=2, lease_ms=60_000)
    assert [h.id for h in leased] == ["listed", "leased"]
    queue.release(leased[0])  # back to the queue: listed, not leased
    queue.lease(60_000)  # "abandoned": leased ...
    r.delete(queue.keys.lease("abandoned"))  # ... then its lease vanished: light_clean's job, not ours
    held = queue.lease(60_000)
    assert held is not None
    assert held.id == "g1held"
    r.lrem(queue.keys.processing, 0, "g1held")  # in no list, but leased: never requeued
    r.set(queue.keys.item("orphan"), b"O")  # an item in no list, no lease
    r.set(queue.keys.item("legacyheld"), b"")
    r.set(queue.keys.legacy_lease("legacyheld"), "g1", px=60_000)
    r.lpush(queue.keys.queue, "ghost-q")
    r.lpush(queue.keys.processing, "ghost-p")
    report = queue.deep_clean()
    assert report == CleanReport(("orphan",), 2)
    assert sorted(queue_list(r, queue)) == ["listed", "orphan"]
    assert queue_list(r, queue)[0] == "orphan"
    assert sorted(processing_list(r, queue)) == ["abandoned", "leased"]
    assert r.keys(f"{queue.prefix}:deep_clean:*") == []
    assert queue.deep_clean() == CleanReport((), 0)


def test_deep_clean_never_requeues_leased_or_listed(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add_many([(f"i{n}", b"") for n in range(10)])
    queue.lease_many(count=5, lease_ms=60_000)
    before = keyspace(r)
    assert queue.deep_clean() == CleanReport((), 0)
    assert keyspace(r) == before


def test_deep_clean_small_chunks(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add_many([(f"q{n}", b"") for n in range(12)])
    queue.lease_many(count=5, lease_ms=60_000)
    orphans = {f"o{n}" for n in range(9)}
    for name in orphans:
        r.set(queue.keys.item(name), b"")
    r.rpush(queue.keys.queue, "ghost1", "ghost2")
    r.lpush(queue.keys.queue, "ghost3")
    r.rpush(queue.keys.processing, "ghost4")
    r.lpush(queue.keys.processing, "ghost5")
    report = queue.deep_clean(chunk=2)
    assert set(report.requeued) == orphans
    assert len(report.requeued) == len(orphans)
    assert report.dropped == 5
    assert queue.counts() == Counts(7 + 9, 5)
    assert r.keys(f"{queue.prefix}:deep_clean:*") == []


def test_deep_clean_ignores_other_prefixes(r: redis.Redis, queue: WorkQueue) -> None:
    elsewhere = WorkQueue(r, queue.prefix + "x")
    r.set(elsewhere.keys.item("orphan"), b"")
    assert queue.deep_clean() == CleanReport((), 0)
    assert r.llen(elsewhere.keys.queue) == 0
    assert elsewhere.deep_clean().requeued == ("orphan",)


# --------------------------------------------------------------------------- legacy lease key


@pytest.fixture
def lq(fr: redis.Redis, prefix: str) -> WorkQueue:
    return WorkQueue(fr, prefix, legacy_lease_key=True)


def assert_both_keys(r: redis.Redis, q: WorkQueue, held: Lease, lease_ms: int) -> None:
    token = held.token.encode()
    assert r.get(q.keys.lease(held.id)) == token
    assert r.get(q.keys.legacy_lease(held.id)) == token
    ttl, legacy_ttl = r.pttl(q.keys.lease(held.id)), r.pttl(q.keys.legacy_lease(held.id))
    assert ttl == legacy_ttl
    assert lease_ms - 2 <= ttl <= lease_ms


def test_legacy_lease_key_on_lease_and_lease_many(fr: redis.Redis, lq: WorkQueue) -> None:
    lq.add_many([("a", b""), ("b", b""), ("c", b"")])
    held = lq.lease(7000)
    assert held is not None
    assert_both_keys(fr, lq, held, 7000)
    for many in lq.lease_many(count=2, lease_ms=9000):
        assert_both_keys(fr, lq, many, 9000)


def test_legacy_lease_key_on_blocking_lease(
    fr: redis.Redis, lq: WorkQueue, frozen_server: RedisServer
) -> None:
    adder = frozen_server.client()
    timer = threading.Timer(0.2, lambda: WorkQueue(adder, lq.prefix).add("late", b""))
    timer.start()
    try:
        held = lq.lease(4000, block=True, timeout_ms=10_000)
    finally:
        timer.join()
        adder.close()
    assert held is not None
    assert_both_keys(fr, lq, held, 4000)


def test_legacy_lease_key_on_renew(fr: redis.Redis, lq: WorkQueue, frozen_server: RedisServer) -> None:
    lq.add("a", b"")
    held = lq.lease(1000)
    assert held is not None
    frozen_server.advance(500)
    assert lq.renew(held, 8000) is True
    assert_both_keys(fr, lq, held, 8000)
    assert lq.renew_many([held], 3000) == [True]
    assert_both_keys(fr, lq, held, 3000)


def test_legacy_lease_key_seen_by_g1_style_cleaner(fr: redis.Redis, lq: WorkQueue) -> None:
    """A PyPI 0.1.5 cleaner keeps an item whose :leased_by_session: key exists."""
    lq.add("a", b"")
    held = lq.lease(5000)
    assert held is not None
    fr.delete(lq.keys.lease("a"))
    assert lq.light_clean().requeued == ()  # the legacy key alone still counts as a lease


def test_without_legacy_option_no_legacy_key(fr: redis.Redis, fq: WorkQueue) -> None:
    fq.add("a", b"")
    held = fq.lease(5000)
    assert held is not None
    fq.renew(held, 5000)
    assert fr.keys("*leased_by_session*") == []


# --------------------------------------------------------------------------- NOSCRIPT, errors, server check


def test_noscript_recovery_every_operation(r: redis.Redis, queue: WorkQueue, other: WorkQueue) -> None:
    def flushed() -> int:
        r.script_flush()
        return eval_calls(r)

    queue.counts()
    mark = flushed()
    assert queue.add("a", b"A") is True
    assert eval_calls(r) == mark + 1
    mark = flushed()
    assert queue.add_many([("b", b"B"), ("c", b"C"), ("d", b"D")]) == [True] * 3
    assert eval_calls(r) == mark + 1
    mark = flushed()
    held = queue.lease(5000)
    assert held is not None
    assert held.id == "a"
    assert eval_calls(r) == mark + 1
    mark = flushed()
    many = queue.lease_many(count=2, lease_ms=5000)
    assert [h.id for h in many] == ["b", "c"]
    assert eval_calls(r) == mark + 1
    mark = flushed()
    assert queue.renew(held, 5000) is True
    assert eval_calls(r) == mark + 1
    mark = flushed()
    assert queue.renew_many(many, 5000) == [True, True]
    mark = flushed()
    assert queue.complete(held) is True
    assert eval_calls(r) == mark + 1
    mark = flushed()
    assert queue.complete_many([many[0]], require_lease=True) == [Outcome.DONE]
    mark = flushed()
    assert queue.release(many[1]) is True
    assert eval_calls(r) == mark + 1
    mark = flushed()
    assert queue.counts() == Counts(2, 0)
    assert eval_calls(r) == mark + 1
    released = queue.lease_many(count=2, lease_ms=5000)
    r.delete(queue.keys.lease(released[0].id))
    flushed()
    assert queue.light_clean().requeued == (released[0].id,)
    assert queue.release_many([released[1]]) == [Outcome.DONE]
    r.set(queue.keys.item("orphan"), b"")
    mark = flushed()
    assert queue.deep_clean().requeued == ("orphan",)
    assert eval_calls(r) >= mark + 1
    flushed()
    timer = threading.Timer(0.2, lambda: other.add("late", b""))
    timer.start()
    leased = []
    try:
        for _ in range(4):
            got = queue.lease(5000, block=True, timeout_ms=5000)
            assert got is not None
            leased.append(got.id)
    finally:
        timer.join()
    assert sorted(leased) == ["c", "d", "late", "orphan"]


def test_timeout_without_block_is_refused(queue: WorkQueue) -> None:
    """RWQ-LEASE-014: a timeout on a non-blocking lease is a caller's mistake, not ignored."""
    queue.add("a", b"A")
    with pytest.raises(InvalidArgument, match="block"):
        queue.lease(1000, timeout_ms=5000)
    assert queue.counts().queued == 1


def test_wrong_typed_key_is_wrong_type(r: redis.Redis, queue: WorkQueue) -> None:
    """The script checks the key's type before writing (RWQ-SCRIPT-007): a typed error, no write."""
    queue.add("a", b"A")
    r.set(queue.keys.queue, "not a list")
    with pytest.raises(WrongType) as info:
        queue.lease(1000)
    assert info.value.code == "WRONG_TYPE"
    assert isinstance(info.value, RwqError)
    assert r.get(queue.keys.queue) == b"not a list"
    assert r.exists(queue.keys.processing, queue.keys.lease("a")) == 0


def test_non_rwq_error_reply_is_redis_failure(r: redis.Redis, queue: WorkQueue) -> None:
    """A server error that is not a script's RWQ_ reply (here OOM under noeviction) is REDIS_ERROR."""
    queue.counts()  # the server checks are done: only add's script call remains
    r.config_set("maxmemory", "1")
    try:
        with pytest.raises(RedisFailure) as info:
            queue.add("a", b"x")
    finally:
        r.config_set("maxmemory", "0")
    assert info.value.code == "REDIS_ERROR"
    assert isinstance(info.value, RwqError)
    assert isinstance(info.value.__cause__, redis.ResponseError)
    assert "maxmemory" in str(info.value)


def test_wrong_typed_policy_is_wrong_type(r: redis.Redis, queue: WorkQueue) -> None:
    """get_policy's plain HGETALL on a policy of another type is WRONG_TYPE (RWQ-RETRY-014)."""
    r.set(queue.keys.policy, "not a hash")
    with pytest.raises(WrongType) as info:
        queue.retry_policy()
    assert info.value.code == "WRONG_TYPE"
    assert "policy" in str(info.value)


def test_script_error_reply_maps_to_invalid_argument(r: redis.Redis, queue: WorkQueue) -> None:
    """A bad token is only caught by the script: its RWQ_INVALID_ARGUMENT becomes InvalidArgument."""
    queue.add("a", b"")
    held = queue.lease(5000)
    assert held is not None
    before = keyspace(r)
    with pytest.raises(InvalidArgument):
        queue.renew(Lease("a", b"", "t" * 129), 5000)
    with pytest.raises(InvalidArgument):
        queue.release(Lease("a", b"", ""))
    assert keyspace(r) == before


def test_eviction_policy_warning(r: redis.Redis, prefix: str) -> None:
    policy = str(r.config_get("maxmemory-policy")["maxmemory-policy"])
    r.config_set("maxmemory-policy", "allkeys-lru")
    try:
        q = WorkQueue(r, prefix)
        with pytest.warns(RwqWarning, match="allkeys-lru"):
            q.counts()
        q.counts()  # checked once per client
    finally:
        r.config_set("maxmemory-policy", policy)


def test_no_warning_with_noeviction(r: redis.Redis, prefix: str, recwarn: pytest.WarningsRecorder) -> None:
    assert r.config_get("maxmemory-policy")["maxmemory-policy"] == "noeviction"
    WorkQueue(r, prefix).counts()
    assert not [w for w in recwarn if issubclass(w.category, RwqWarning)]


def test_config_get_refused_is_tolerated(r: redis.Redis, prefix: str) -> None:
    """Managed Redis often renames CONFIG away: the check must not fail the operation."""
    r.acl_setuser("noconfig", enabled=True, passwords=["+pw"], keys=["~*"], commands=["+@all", "-config"])
    try:
        client = redis.Redis(
            host=r.connection_pool.connection_kwargs["host"],
            port=r.connection_pool.connection_kwargs["port"],
            username="noconfig",
            password="pw",
        )
        q = WorkQueue(client, prefix)
        assert q.add("a", b"") is True
        assert q.counts() == Counts(1, 0)
        client.close()
    finally:
        r.acl_deluser("noconfig")


def test_prefix_property(queue: WorkQueue, prefix: str) -> None:
    assert queue.prefix == prefix
    assert queue.keys.queue == f"{prefix}:queue".encode()
