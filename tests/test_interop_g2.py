"""Interoperability with redis-work-queue's current generation G2 (Go/Rust 0.3.0, NuGet 1.0.0, HEAD).

G2 has no installable Python package, so :mod:`g2_client` replays its exact command sequences
(research note ../shared/research/mevitae.md §3.1); the first test pins those sequences with
MONITOR. The last test runs a mixed fleet: rwq, the published PyPI 0.1.5 (G1) and G2 workers on
one queue. Lease expiry uses the frozen-clock server (``fr`` / ``frozen_server.advance``).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import pytest
import redis
from redis_work_queue import Item, KeyPrefix
from redis_work_queue import WorkQueue as G1WorkQueue

from g2_client import G2Item, G2WorkQueue
from interop_helpers import (
    NOTHING,
    SLACK_MS,
    CleanerBetweenPopAndSetex,
    keys,
    lists,
    lrange,
    wait_until_blocked,
)
from rwq import CleanReport, FailOutcome, FailResult, Lease, LeaseLost, RetryPolicy, WorkQueue
from rwq.conformance.redis_server import RedisServer
from rwq.protocol import operations as ops
from rwq.protocol.commands import Plan, RunScript

pytestmark = pytest.mark.filterwarnings("ignore:Call to deprecated setex:DeprecationWarning")

PAYLOADS: dict[str, bytes] = {
    "plain": b"hello",
    "empty": b"",  # a real item with an empty payload: G2 tells it from a ghost by GET's nil
    "all-bytes": bytes(range(256)),
    "nul-crlf": b"\x00\r\n\xff\x00",
    "utf8": "gr\u00fc\u00dfe \u2713".encode(),
}


# --- the double is faithful -----------------------------------------------------------------------


def test_the_g2_double_sends_g2s_exact_command_sequences(
    r: redis.Redis, redis_server: RedisServer, prefix: str
) -> None:
    g2 = G2WorkQueue(prefix)
    wire = redis_server.client()
    setup = redis_server.client(single_connection_client=True)
    setup_port = str(setup.client_info()["addr"]).rsplit(":", 1)[1]  # its commands are not G2's
    P, S = prefix, g2.session
    with r.monitor() as monitor:  # type: ignore[no-untyped-call]
        assert g2.add_item(wire, G2Item("a", b"A")) is True
        assert g2.add_item(wire, G2Item("a", b"other")) is False
        g2.add_unique_item(wire, G2Item("b", b"B"))
        a = g2.lease(wire, 30, block=False)
        b = g2.lease(wire, 30, block=True, timeout=1)
        assert a == G2Item("a", b"A")
        assert b == G2Item("b", b"B")
        assert g2.complete(wire, a) is True
        setup.delete(f"{P}:lease:b")
        g2.light_clean(wire)  # b: no lease, has data -> requeued
        setup.lpush(f"{P}:processing", "g")
        g2.light_clean(wire)  # g: no lease, no data -> dropped
        setup.set(f"{P}:item:o", b"O")
        g2.deep_clean(wire)  # b is queued; o is an orphan -> requeued
        wire.echo("end")
        seen = []
        for _ in range(100):
            command = monitor.next_command()
            if command["client_port"] == setup_port or command["command"].startswith(("HELLO", "CLIENT")):
                continue
            if command["command"] == "ECHO end":
                break
            seen.append(command["command"])
    wire.close()
    setup.close()
    assert seen == [
        f"SETNX {P}:item:a A",
        f"LPUSH {P}:queue a",
        f"SETNX {P}:item:a other",
        "MULTI",
        f"SET {P}:item:b B",
        f"LPUSH {P}:queue b",
        "EXEC",
        f"RPOPLPUSH {P}:queue {P}:processing",
        f"GET {P}:item:a",
        f"SETEX {P}:lease:a 30 {S}",
        f"BRPOPLPUSH {P}:queue {P}:processing 1",
        f"GET {P}:item:b",
        f"SETEX {P}:lease:b 30 {S}",
        "MULTI",
        f"DEL {P}:item:a",
        f"LREM {P}:processing 0 a",
        f"DEL {P}:lease:a",
        "EXEC",
        f"LRANGE {P}:processing 0 -1",
        f"EXISTS {P}:lease:b",
        f"EXISTS {P}:item:b",
        "MULTI",
        f"LREM {P}:processing 0 b",
        f"LPUSH {P}:queue b",
        "EXEC",
        f"LRANGE {P}:processing 0 -1",
        f"EXISTS {P}:lease:g",
        f"EXISTS {P}:item:g",
        f"LREM {P}:processing 0 g",
        "MULTI",
        f"KEYS {P}:item:*",
        f"LRANGE {P}:queue 0 -1",
        "EXEC",
        f"EXISTS {P}:lease:o",
        "MULTI",
        f"LREM {P}:processing 0 o",
        f"LPUSH {P}:queue o",
        "EXEC",
    ]
    assert lists(r, prefix) == (["o", "b"], [])


# --- rwq adds, G2 leases and completes ------------------------------------------------------------


def test_rwq_items_are_leased_and_completed_by_g2(r: redis.Redis, prefix: str) -> None:
    queue, worker = WorkQueue(r, prefix), G2WorkQueue(prefix)
    assert queue.add_many(list(PAYLOADS.items())) == [True] * len(PAYLOADS)
    leased = []
    for n, (item_id, payload) in enumerate(PAYLOADS.items()):
        item = worker.lease(r, 30, block=n % 2 == 1, timeout=1)  # alternate RPOPLPUSH / BRPOPLPUSH
        assert item == G2Item(item_id, payload)
        assert r.ttl(f"{prefix}:lease:{item_id}") == 30
        leased.append(item)
    assert worker.lease(r, 30, block=False) is None
    assert (queue.counts().queued, queue.counts().processing) == (0, len(PAYLOADS))
    assert queue.light_clean() == NOTHING  # G2's leases are live

    assert [worker.complete(r, item) for item in leased] == [True] * len(leased)
    assert [worker.complete(r, item) for item in leased] == [False] * len(leased)
    assert [queue.complete(item_id) for item_id in PAYLOADS] == [False] * len(PAYLOADS)
    assert keys(r) == set()


def test_g2_blocking_lease_is_woken_by_rwq_add(
    r: redis.Redis, prefix: str, redis_server: RedisServer
) -> None:
    queue, worker = WorkQueue(r, prefix), G2WorkQueue(prefix)
    got: list[G2Item | None] = []
    other = redis_server.client(socket_timeout=10)
    waiter = threading.Thread(target=lambda: got.append(worker.lease(other, 30, block=True, timeout=5)))
    waiter.start()
    try:
        wait_until_blocked(r)
        assert queue.add("late", b"\x00late")
    finally:
        waiter.join(10)
        other.close()
    assert not waiter.is_alive()
    assert got == [G2Item("late", b"\x00late")]
    assert worker.complete(r, G2Item("late", b"")) is True
    assert keys(r) == set()


# --- G2 adds, rwq leases and completes ------------------------------------------------------------


def test_g2_items_are_leased_and_completed_by_rwq(r: redis.Redis, prefix: str) -> None:
    queue, producer = WorkQueue(r, prefix), G2WorkQueue(prefix)
    order = list(PAYLOADS)
    for n, item_id in enumerate(order):
        if n % 2:
            producer.add_unique_item(r, G2Item(item_id, PAYLOADS[item_id]))
        else:
            assert producer.add_item(r, G2Item(item_id, PAYLOADS[item_id])) is True

    first = queue.lease(30_000)
    assert first is not None
    assert (first.id, first.data) == (order[0], PAYLOADS[order[0]])
    batch = queue.lease_many(count=2, lease_ms=30_000)
    assert [(held.id, held.data) for held in batch] == [(i, PAYLOADS[i]) for i in order[1:3]]
    rest = [queue.lease(30_000, block=True, timeout_ms=1000) for _ in order[3:]]
    assert [(held.id, held.data) for held in rest if held] == [(i, PAYLOADS[i]) for i in order[3:]]
    assert queue.lease(30_000) is None
    assert all(r.exists(f"{prefix}:lease:{item_id}") for item_id in order)

    held: list[Lease] = [first, *batch, *(lease for lease in rest if lease)]
    assert [queue.complete(lease) for lease in held] == [True] * len(order)
    assert [queue.complete(lease) for lease in held] == [False] * len(order)
    assert [producer.complete(r, G2Item(i, b"")) for i in order] == [False] * len(order)
    assert keys(r) == set()


def test_rwq_blocking_lease_is_woken_by_g2_add(
    r: redis.Redis, prefix: str, redis_server: RedisServer
) -> None:
    producer = G2WorkQueue(prefix)
    got: list[Lease | None] = []
    other = redis_server.client(socket_timeout=10)
    consumer = WorkQueue(other, prefix)
    consumer.counts()  # the one-off server check, before blocking
    waiter = threading.Thread(target=lambda: got.append(consumer.lease(30_000, block=True, timeout_ms=5000)))
    waiter.start()
    try:
        wait_until_blocked(r)
        assert producer.add_item(r, G2Item("wake", b"W\x00"))
    finally:
        waiter.join(10)
        other.close()
    assert not waiter.is_alive()
    assert len(got) == 1
    assert got[0] is not None
    assert (got[0].id, got[0].data) == ("wake", b"W\x00")
    assert lists(r, prefix) == ([], ["wake"])
    assert producer.complete(r, G2Item("wake", b"")) is True
    assert keys(r) == set()


def test_add_dedupes_by_id_in_both_directions(r: redis.Redis, prefix: str) -> None:
    queue, g2 = WorkQueue(r, prefix), G2WorkQueue(prefix)
    assert queue.add("x", b"rwq")
    assert g2.add_item(r, G2Item("x", b"g2")) is False
    assert g2.add_item(r, G2Item("y", b"g2")) is True
    assert queue.add("y", b"rwq") is False
    assert lists(r, prefix) == (["y", "x"], [])
    assert (r.get(f"{prefix}:item:x"), r.get(f"{prefix}:item:y")) == (b"rwq", b"g2")


# --- cleaners respect each other's leases ---------------------------------------------------------


def test_g2_cleaners_respect_an_rwq_lease_until_it_expires(
    fr: redis.Redis, frozen_server: RedisServer, prefix: str
) -> None:
    queue, g2 = WorkQueue(fr, prefix), G2WorkQueue(prefix)
    assert queue.add_many([("a", b"A"), ("b", b"B")]) == [True, True]
    held_a, held_b = queue.lease(5000), queue.lease(5000)
    assert held_a is not None
    assert held_b is not None
    g2.light_clean(fr)
    g2.deep_clean(fr)
    frozen_server.advance(5000 - SLACK_MS)
    g2.light_clean(fr)
    g2.deep_clean(fr)
    assert lists(fr, prefix) == ([], ["b", "a"])

    frozen_server.advance(2 * SLACK_MS)
    g2.light_clean(fr)  # requeues both, oldest processing entry last: they have no lease
    assert lists(fr, prefix) == (["a", "b"], [])
    assert g2.lease(fr, 30, block=False) == G2Item("b", b"B")
    assert g2.lease(fr, 30, block=False) == G2Item("a", b"A")
    assert g2.complete(fr, G2Item("a", b"")) is True
    assert queue.complete(held_a) is False
    with pytest.raises(LeaseLost):  # the G2 worker holds b now
        queue.complete(held_b, require_lease=True)
    assert g2.complete(fr, G2Item("b", b"")) is True
    assert keys(fr) == set()


def test_g2_deep_clean_requeues_an_expired_rwq_item_rwq_can_lease_again(
    fr: redis.Redis, frozen_server: RedisServer, prefix: str
) -> None:
    queue, g2 = WorkQueue(fr, prefix), G2WorkQueue(prefix)
    assert queue.add("a", b"A")
    crashed = queue.lease(5000)
    assert crashed is not None
    frozen_server.advance(5000 + SLACK_MS)
    g2.deep_clean(fr)  # G2's deep clean also resets processing entries without a lease
    assert lists(fr, prefix) == (["a"], [])
    again = queue.lease(5000)
    assert again is not None
    assert (again.id, again.data) == ("a", b"A")
    assert queue.complete(again, require_lease=True) is True
    assert queue.complete(crashed) is False
    assert keys(fr) == set()


def test_rwq_cleaners_respect_a_g2_lease_until_it_expires(
    fr: redis.Redis, frozen_server: RedisServer, prefix: str
) -> None:
    queue, g2 = WorkQueue(fr, prefix), G2WorkQueue(prefix)
    assert g2.add_item(fr, G2Item("a", b"A"))
    item = g2.lease(fr, 10, block=False)
    assert item == G2Item("a", b"A")
    assert fr.pttl(f"{prefix}:lease:a") == 10_000
    assert queue.light_clean() == NOTHING
    assert queue.deep_clean() == NOTHING
    frozen_server.advance(10_000 - SLACK_MS)
    assert queue.light_clean() == NOTHING
    assert queue.deep_clean() == NOTHING
    assert lists(fr, prefix) == ([], ["a"])

    frozen_server.advance(2 * SLACK_MS)
    assert queue.light_clean() == CleanReport(("a",), 0)
    held = queue.lease(10_000)
    assert held is not None
    assert (held.id, held.data) == ("a", b"A")
    # G2's complete deletes unconditionally: the slow G2 worker is the first completer.
    assert g2.complete(fr, item) is True
    assert queue.complete(held) is False
    assert keys(fr) == set()


def test_rwq_deep_clean_recovers_g2_orphans_and_respects_their_leases(
    fr: redis.Redis, frozen_server: RedisServer, prefix: str
) -> None:
    queue, g2 = WorkQueue(fr, prefix), G2WorkQueue(prefix)
    # add_item crashed between SETNX and LPUSH (§4.2 point 3): an item in no list.
    assert fr.setnx(f"{prefix}:item:lost", b"L")
    # A G2 worker leased "held" and its processing entry was lost (say, an RPOP by an operator).
    assert g2.add_item(fr, G2Item("held", b"H"))
    assert g2.lease(fr, 10, block=False) == G2Item("held", b"H")
    assert fr.lrem(f"{prefix}:processing", 0, "held") == 1

    assert queue.deep_clean() == CleanReport(("lost",), 0)
    assert queue.deep_clean() == NOTHING  # "lost" is queued now, "held" still leased
    frozen_server.advance(10_000 + SLACK_MS)
    assert queue.deep_clean() == CleanReport(("held",), 0)
    assert g2.lease(fr, 10, block=False) == G2Item("lost", b"L")
    assert g2.lease(fr, 10, block=False) == G2Item("held", b"H")
    assert g2.complete(fr, G2Item("lost", b""))
    assert g2.complete(fr, G2Item("held", b""))
    assert keys(fr) == set()


def _drive_until_requeue(
    queue: WorkQueue, plan: Plan[CleanReport], reports: list[CleanReport]
) -> Iterator[None]:
    """Run an rwq deep clean step by step; pause once, when its run index is built and it is
    about to requeue what its SCAN found."""
    reply: Any = None
    paused = False
    while True:
        try:
            command = plan.send(reply)
        except StopIteration as done:
            reports.append(done.value)
            return
        if isinstance(command, RunScript) and command.args[0] == b"requeue" and not paused:
            paused = True
            yield
        reply = queue._execute(command)


def test_g2_cleaners_find_nothing_to_do_on_a_queue_rwq_runs(r: redis.Redis, prefix: str) -> None:
    queue, legacy, g2 = WorkQueue(r, prefix), WorkQueue(r, prefix, legacy_lease_key=True), G2WorkQueue(prefix)
    assert queue.add_many([(f"i{n:02d}", bytes([n])) for n in range(30)]) == [True] * 30
    held = queue.lease_many(count=6, lease_ms=60_000) + legacy.lease_many(count=6, lease_ms=60_000)
    assert [queue.complete(lease) for lease in held[:4]] == [True] * 4
    assert queue.release(held[4])
    assert legacy.release(held[6])
    live = {f"i{n:02d}" for n in range(30)} - {lease.id for lease in held[:4]}
    assert queue.light_clean() == NOTHING

    def state() -> tuple[list[str], list[str], set[str]]:
        return (*lists(r, prefix), keys(r))

    # Pause an rwq deep clean mid-run (its run index exists) and let both G2 cleaners loose.
    reports: list[CleanReport] = []
    driver = _drive_until_requeue(queue, ops.deep_clean(queue.keys), reports)
    next(driver)
    before = state()
    item_ids = {key[len(f"{prefix}:item:") :] for key in before[2] if key.startswith(f"{prefix}:item:")}
    assert item_ids == live  # rwq keeps nothing else under P:item:
    assert {key for key in before[2] if key.startswith(f"{prefix}:deep_clean:")}  # the index, elsewhere
    allowed = ("queue", "processing", "item:", "lease:", "leased_by_session:", "deep_clean:")
    assert all(key.startswith(tuple(f"{prefix}:{part}" for part in allowed)) for key in before[2])
    g2.deep_clean(r)
    g2.light_clean(r)
    assert state() == before
    assert list(driver) == []  # the rest of the rwq deep clean
    assert reports == [NOTHING]
    g2.deep_clean(r)
    after = state()
    assert after[:2] == before[:2]
    assert after[2] == {key for key in before[2] if f"{prefix}:deep_clean:" not in key}


def test_g2_clients_never_see_items_rwq_parked_in_delay_or_dead_letter(r: redis.Redis, prefix: str) -> None:
    # Profile keys keep delayed and dead payloads outside P:item:, so G2 neither leases them nor
    # "recovers" them early (its deep clean walks KEYS P:item:*).
    queue, g2 = WorkQueue(r, prefix), G2WorkQueue(prefix)
    assert queue.add_many([("dead", b"1"), ("retry", b"2"), ("ready", b"3")]) == [True] * 3
    assert queue.add("later", b"4", delay_ms=600_000)
    queue.set_retry_policy(RetryPolicy(max_attempts=1))
    dead = queue.lease(60_000)
    assert dead is not None
    assert queue.fail(dead).outcome is FailOutcome.DEAD
    queue.set_retry_policy(RetryPolicy(max_attempts=3, backoff="fixed", base_ms=600_000))
    retry = queue.lease(60_000)
    assert retry is not None
    assert queue.fail(retry) == FailResult(FailOutcome.RETRY, 600_000)

    before = (*lists(r, prefix), keys(r))
    assert {key for key in before[2] if key.startswith(f"{prefix}:item:")} == {f"{prefix}:item:ready"}
    g2.deep_clean(r)
    g2.light_clean(r)
    assert (*lists(r, prefix), keys(r)) == before
    assert g2.lease(r, 30, block=False) == G2Item("ready", b"3")
    assert g2.lease(r, 30, block=False) is None
    assert g2.complete(r, G2Item("ready", b"")) is True
    assert queue.dead_item("dead") is not None


# --- completion across generations ----------------------------------------------------------------


def test_a_g2_complete_of_an_rwq_leased_item_wins_once(r: redis.Redis, prefix: str) -> None:
    queue, g2 = WorkQueue(r, prefix), G2WorkQueue(prefix)
    assert queue.add("a", b"A")
    held = queue.lease(60_000)
    assert held is not None
    assert g2.complete(r, G2Item("a", b"")) is True
    assert g2.complete(r, G2Item("a", b"")) is False
    assert queue.complete(held) is False
    with pytest.raises(LeaseLost):  # G2 deleted rwq's lease key along with the item
        queue.complete(held, require_lease=True)
    assert keys(r) == set()


def test_an_rwq_complete_of_a_g2_leased_item_wins_once(r: redis.Redis, prefix: str) -> None:
    queue, g2 = WorkQueue(r, prefix), G2WorkQueue(prefix)
    assert g2.add_item(r, G2Item("a", b"A"))
    item = g2.lease(r, 60, block=False)
    assert item is not None
    assert queue.complete("a") is True
    assert keys(r) == set()  # item, processing entry and P:lease:a are gone
    assert g2.complete(r, item) is False
    g2.light_clean(r)
    g2.deep_clean(r)
    assert keys(r) == set()


def test_the_legacy_lease_key_left_by_a_g2_complete_is_removed_by_the_rwq_holder(
    r: redis.Redis, prefix: str
) -> None:
    queue, g2 = WorkQueue(r, prefix, legacy_lease_key=True), G2WorkQueue(prefix)
    assert queue.add("a", b"A")
    held = queue.lease(60_000)
    assert held is not None
    assert g2.complete(r, G2Item("a", b"")) is True
    assert keys(r) == {f"{prefix}:leased_by_session:a"}  # G2 does not know that key
    assert queue.lease(1000) is None
    assert queue.light_clean() == NOTHING
    assert queue.deep_clean() == NOTHING
    assert queue.complete(held) is False
    assert keys(r) == set()


# --- ghosts ---------------------------------------------------------------------------------------


def test_rwq_deep_clean_drops_the_ghost_a_g2_complete_leaves(
    fr: redis.Redis, frozen_server: RedisServer, prefix: str
) -> None:
    queue, g2 = WorkQueue(fr, prefix), G2WorkQueue(prefix)
    assert g2.add_item(fr, G2Item("a", b"A"))
    slow = g2.lease(fr, 1, block=False)
    assert slow is not None
    frozen_server.advance(1000 + SLACK_MS)
    assert queue.light_clean() == CleanReport(("a",), 0)
    assert g2.complete(fr, slow) is True  # G2 removes no queue copy: "a" is now a ghost
    assert lists(fr, prefix) == (["a"], [])
    assert queue.add("b", b"B")  # behind the ghost
    # A non-blocking G2 lease would stop at the ghost and report an empty queue (§4.1).
    assert queue.deep_clean() == CleanReport((), 1)
    assert g2.lease(fr, 10, block=False) == G2Item("b", b"B")
    assert g2.complete(fr, G2Item("b", b"")) is True
    assert keys(fr) == set()


def test_rwq_lease_and_light_clean_drop_ghosts_g2_would_leave_behind(r: redis.Redis, prefix: str) -> None:
    queue, g2 = WorkQueue(r, prefix), G2WorkQueue(prefix)
    r.lpush(f"{prefix}:queue", "ghost-q")
    assert queue.add("real", b"R")
    held = queue.lease(60_000)
    assert held is not None
    assert held.id == "real"
    assert lists(r, prefix) == ([], ["real"])
    r.lpush(f"{prefix}:processing", "ghost-p")
    assert queue.light_clean() == CleanReport((), 1)
    assert lists(r, prefix) == ([], ["real"])
    assert g2.complete(r, G2Item("real", b"")) is True
    assert keys(r) == set()


# --- races between a G2 lease and an rwq cleaner --------------------------------------------------


def test_a_g2_item_requeued_inside_its_lease_window_survives_its_holders_crash(
    fr: redis.Redis, frozen_server: RedisServer, prefix: str
) -> None:
    """An rwq light clean runs between G2's RPOPLPUSH and SETEX (§4.2 point 1).

    The id is then queued, held by a live ``P:lease`` lease, and in no processing entry. An rwq
    lease that pops it must not hand it out, and must not drop its only entry: if the G2 worker
    then crashes, a light clean after the lease expires must find the item again.
    """
    queue, g2 = WorkQueue(fr, prefix), G2WorkQueue(prefix)
    assert queue.add("a", b"A")
    reports: list[CleanReport] = []
    racing = cast(redis.Redis, CleanerBetweenPopAndSetex(fr, lambda: reports.append(queue.light_clean())))
    item = g2.lease(racing, 10, block=False)
    assert reports == [CleanReport(("a",), 0)]
    assert item == G2Item("a", b"A")
    assert lists(fr, prefix) == (["a"], [])

    assert queue.lease(10_000) is None  # held by the G2 worker
    queued, processing = lists(fr, prefix)
    assert "a" in queued + processing, "rwq's lease dropped the only entry of a held item"
    frozen_server.advance(10_000 + SLACK_MS)  # the G2 worker crashed
    queue.light_clean()
    again = queue.lease(10_000)
    assert again is not None
    assert (again.id, again.data) == ("a", b"A")
    assert queue.complete(again) is True
    assert keys(fr) == set()


# --- a mixed fleet --------------------------------------------------------------------------------

FLEET_ITEMS = 200
FLEET_LEASE_S = 10
ADDS_PER_ROUND = 10
LEASES_PER_TURN = 3
MAX_ROUNDS = 60


@dataclass
class Held:
    worker: str
    id: str
    data: bytes
    handle: Any


class FleetWorker:
    """One worker of the mixed fleet; drops (never completes) its 4th and 13th lease."""

    def __init__(
        self, name: str, lease: Callable[[bool], Held | None], complete: Callable[[Held], bool]
    ) -> None:
        self.name, self._lease, self.complete = name, lease, complete
        self.leases = 0

    def lease(self, block: bool) -> Held | None:
        self.leases += 1
        return self._lease(block)

    def drops_this_one(self) -> bool:
        return self.leases in (4, 13)


def rwq_worker(name: str, queue: WorkQueue) -> FleetWorker:
    def lease(block: bool) -> Held | None:
        got = queue.lease(FLEET_LEASE_S * 1000, block=block, timeout_ms=100 if block else 0)
        return None if got is None else Held(name, got.id, got.data, got)

    return FleetWorker(name, lease, lambda held: queue.complete(held.handle))


def g1_worker(name: str, db: redis.Redis, g1: Any) -> FleetWorker:
    def lease(block: bool) -> Held | None:
        got = g1.lease(db, FLEET_LEASE_S, block=block, timeout=1)
        return None if got is None else Held(name, got.id(), got.data(), got)

    return FleetWorker(name, lease, lambda held: bool(g1.complete(db, held.handle)))


def g2_worker(name: str, db: redis.Redis, g2: G2WorkQueue) -> FleetWorker:
    def lease(block: bool) -> Held | None:
        got = g2.lease(db, FLEET_LEASE_S, block=block, timeout=1)
        return None if got is None else Held(name, got.id, got.data, got)

    return FleetWorker(name, lease, lambda held: g2.complete(db, held.handle))


def test_mixed_fleet_completes_every_item_exactly_once(
    fr: redis.Redis, frozen_server: RedisServer, prefix: str
) -> None:
    rwq, rwq_legacy = WorkQueue(fr, prefix), WorkQueue(fr, prefix, legacy_lease_key=True)
    g1, g2 = G1WorkQueue(KeyPrefix(prefix)), G2WorkQueue(prefix)
    workers = [
        rwq_worker("rwq", rwq),
        g1_worker("pypi-0.1.5", fr, g1),
        g2_worker("g2", fr, g2),
        rwq_worker("rwq-legacy", rwq_legacy),
    ]
    expected = {
        f"job-{n:03d}": f"payload {n}:".encode() + bytes([n % 256, 0, 255]) for n in range(FLEET_ITEMS)
    }
    to_add = list(expected.items())
    first_completer: dict[str, str] = {}
    completions = Counter[str]()
    deliveries = Counter[str]()
    dropped: list[tuple[FleetWorker, Held]] = []
    recoveries = 0

    def produce(n: int, item_id: str, data: bytes) -> None:
        kind = n % 4
        if kind == 0:
            assert rwq.add(item_id, data) is True
        elif kind == 1:
            g1.add_item(fr, Item(data, id=item_id))
        elif kind == 2:
            assert g2.add_item(fr, G2Item(item_id, data)) is True
        else:
            g2.add_unique_item(fr, G2Item(item_id, data))

    added = 0
    for round_no in range(MAX_ROUNDS):
        for item_id, data in to_add[added : added + ADDS_PER_ROUND]:
            produce(added, item_id, data)
            added += 1
        for worker in workers:
            for _ in range(LEASES_PER_TURN):
                if not rwq.queue_len():  # blocking leases only when an item is ready: the clock is frozen
                    break
                held = worker.lease(block=worker.leases % 2 == 1)
                assert held is not None, f"{worker.name} got nothing from a non-empty queue"
                assert held.data == expected[held.id], f"{worker.name} got a wrong or empty payload"
                deliveries[held.id] += 1
                if worker.drops_this_one():
                    dropped.append((worker, held))
                    continue
                if worker.complete(held):
                    completions[held.id] += 1
                    first_completer[held.id] = worker.name
                    fr.set(f"results:{prefix}:{held.id}", worker.name)
        if round_no % 3 == 2:
            # Every dropped lease is still live: rwq's cleaners must leave all of them alone.
            assert rwq.light_clean() == NOTHING
            assert rwq.deep_clean() == NOTHING
        if round_no % 7 == 6 or (added == FLEET_ITEMS and not rwq.queue_len()):
            if not rwq.counts().processing and added == FLEET_ITEMS:
                break
            # The dropped leases expire; rwq's light clean puts exactly those items back.
            in_flight = set(lrange(fr, f"{prefix}:processing"))
            frozen_server.advance(FLEET_LEASE_S * 1000 + SLACK_MS)
            report = rwq.light_clean()
            assert sorted(report.requeued) == sorted(in_flight)
            assert report.dropped == 0
            recoveries += 1
    else:
        pytest.fail(f"the fleet did not drain in {MAX_ROUNDS} rounds")

    assert len(dropped) == 8
    assert recoveries >= 2
    assert {worker.name for worker, _ in dropped} == {worker.name for worker in workers}
    assert completions == Counter(dict.fromkeys(expected, 1))
    assert set(first_completer.values()) == {worker.name for worker in workers}
    redeliveries = Counter(held.id for _, held in dropped)
    assert deliveries == Counter({item_id: 1 + redeliveries[item_id] for item_id in expected})
    # The dropped workers wake up late: their completes are refused and resurrect nothing.
    assert [worker.complete(held) for worker, held in dropped] == [False] * len(dropped)
    assert rwq.deep_clean() == NOTHING
    assert rwq.light_clean() == NOTHING
    assert keys(fr) == {f"results:{prefix}:{item_id}" for item_id in expected}
