"""Interoperability with the published PyPI ``redis-work-queue`` 0.1.5 (wire generation G1), both ways.

G1 (research note ../shared/research/mevitae.md §3.3): add_item = MULTI SET+LPUSH (no dedupe);
lease = (B)RPOPLPUSH, GET (a ghost comes back as an empty payload), SETEX
``P:leased_by_session:<id>`` <secs>; complete = LREM processing, and only if that removed the id,
MULTI DEL item + DEL lease; light_clean requeues every processing id without a
``leased_by_session`` key, with no data check, through the ``P:cleaning`` journal.

Every call to the G1 side is a real call into the installed 0.1.5 package. Lease expiry uses
the frozen-clock server (``fr`` / ``frozen_server.advance``), never sleeping.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
import redis
from redis_work_queue import Item, KeyPrefix
from redis_work_queue import WorkQueue as G1WorkQueue

from interop_helpers import (
    NOTHING,
    SLACK_MS,
    CleanerBetweenPopAndSetex,
    keys,
    lists,
    wait_until_blocked,
)
from rwq import CleanReport, WorkQueue
from rwq.conformance.redis_server import RedisServer

pytestmark = pytest.mark.filterwarnings("ignore:Call to deprecated setex:DeprecationWarning")

PAYLOADS: dict[str, bytes] = {
    "plain": b"hello",
    "all-bytes": bytes(range(256)),
    "nul-crlf": b"\x00\r\n\xff\x00",
    "utf8": "gr\u00fc\u00dfe \u2713".encode(),
    "large": b"\xab" * 200_000,
}


def g1(prefix: str) -> Any:
    """The published 0.1.5 client of queue ``prefix``."""
    return G1WorkQueue(KeyPrefix(prefix))


# --- rwq adds, 0.1.5 leases and completes ---------------------------------------------------------


def test_rwq_items_are_leased_and_completed_by_g1(r: redis.Redis, prefix: str) -> None:
    queue, worker = WorkQueue(r, prefix), g1(prefix)
    assert queue.add_many(list(PAYLOADS.items())) == [True] * len(PAYLOADS)

    leased = []
    for item_id, payload in PAYLOADS.items():  # FIFO: add_many's order is lease order
        item = worker.lease(r, 30, block=False)
        assert item is not None
        assert (item.id(), item.data()) == (item_id, payload)
        assert r.ttl(f"{prefix}:leased_by_session:{item_id}") == 30
        leased.append(item)
    assert worker.lease(r, 30, block=False) is None
    assert (queue.counts().queued, queue.counts().processing) == (0, len(PAYLOADS))

    for item in leased:
        assert worker.complete(r, item) is True
    assert (queue.counts().queued, queue.counts().processing) == (0, 0)
    assert [queue.complete(item_id) for item_id in PAYLOADS] == [False] * len(PAYLOADS)
    assert queue.lease(1000) is None
    assert keys(r) == set()


def test_rwq_items_are_leased_by_blocking_g1(r: redis.Redis, prefix: str, redis_server: RedisServer) -> None:
    queue, worker = WorkQueue(r, prefix), g1(prefix)
    assert queue.add("ready", b"R")
    item = worker.lease(r, 30, block=True, timeout=1)
    assert item is not None
    assert (item.id(), item.data()) == ("ready", b"R")

    # A 0.1.5 worker blocked in BRPOPLPUSH is woken by rwq's add (an LPUSH inside Lua).
    got: list[Any] = []
    other = redis_server.client(socket_timeout=10)
    waiter = threading.Thread(target=lambda: got.append(worker.lease(other, 30, block=True, timeout=5)))
    waiter.start()
    try:
        wait_until_blocked(r)
        assert queue.add("late", b"\x00late\xff")
    finally:
        waiter.join(10)
        other.close()
    assert not waiter.is_alive()
    assert len(got) == 1
    assert got[0] is not None
    assert (got[0].id(), got[0].data()) == ("late", b"\x00late\xff")

    assert worker.complete(r, item) is True
    assert worker.complete(r, got[0]) is True
    assert queue.complete("ready") is False
    assert queue.complete("late") is False
    assert keys(r) == set()


# --- 0.1.5 adds, rwq leases and completes ---------------------------------------------------------


def test_g1_items_are_leased_and_completed_by_rwq(r: redis.Redis, prefix: str) -> None:
    queue, producer = WorkQueue(r, prefix), g1(prefix)
    for item_id, payload in PAYLOADS.items():
        producer.add_item(r, Item(payload, id=item_id))
    producer.add_item(r, Item("text payload", id="from-str"))  # 0.1.5 encodes str as UTF-8
    expected = {**PAYLOADS, "from-str": b"text payload"}
    order = list(expected)

    first = queue.lease(30_000)
    assert first is not None
    assert (first.id, first.data) == (order[0], expected[order[0]])
    assert r.pttl(f"{prefix}:lease:{first.id}") == pytest.approx(30_000, abs=1000)
    assert not r.exists(f"{prefix}:leased_by_session:{first.id}")  # legacy_lease_key is off
    batch = queue.lease_many(count=3, lease_ms=30_000)
    assert [(held.id, held.data) for held in batch] == [(i, expected[i]) for i in order[1:4]]
    blocking = queue.lease(30_000, block=True, timeout_ms=1000)
    assert blocking is not None
    assert (blocking.id, blocking.data) == (order[4], expected[order[4]])
    last = queue.lease(30_000, block=True, timeout_ms=1000)
    assert last is not None
    assert (last.id, last.data) == (order[5], expected[order[5]])
    assert queue.lease(30_000) is None

    held = [first, *batch, blocking, last]
    assert [queue.complete(lease) for lease in held] == [True] * len(held)
    assert [queue.complete(lease) for lease in held] == [False] * len(held)
    # A 0.1.5 worker that also held one of them: its complete is refused and deletes nothing.
    assert [producer.complete(r, Item(b"", id=i)) for i in order] == [False] * len(order)
    assert keys(r) == set()


def test_rwq_blocking_lease_is_woken_by_g1_add(
    r: redis.Redis, prefix: str, redis_server: RedisServer
) -> None:
    producer = g1(prefix)
    got: list[Any] = []
    other = redis_server.client(socket_timeout=10)
    consumer = WorkQueue(other, prefix)
    consumer.counts()  # the one-off server check, before blocking
    waiter = threading.Thread(target=lambda: got.append(consumer.lease(30_000, block=True, timeout_ms=5000)))
    waiter.start()
    try:
        wait_until_blocked(r)
        producer.add_item(r, Item(b"\xffwake\x00", id="wake"))
    finally:
        waiter.join(10)
        other.close()
    assert not waiter.is_alive()
    assert len(got) == 1
    assert got[0] is not None
    assert (got[0].id, got[0].data) == ("wake", b"\xffwake\x00")
    assert lists(r, prefix) == ([], ["wake"])
    assert r.exists(f"{prefix}:lease:wake")
    assert consumer.complete(got[0]) is True
    assert keys(r) == set()


def test_duplicate_g1_adds_never_reach_a_g1_worker_as_a_ghost(r: redis.Redis, prefix: str) -> None:
    # 0.1.5's add_item does not dedupe: two adds of one id queue it twice.
    queue, fleet = WorkQueue(r, prefix), g1(prefix)
    fleet.add_item(r, Item(b"first", id="dup"))
    fleet.add_item(r, Item(b"second", id="dup"))
    assert lists(r, prefix) == (["dup", "dup"], [])
    held = queue.lease(30_000)
    assert held is not None
    assert (held.id, held.data) == ("dup", b"second")
    assert queue.complete(held) is True
    assert lists(r, prefix) == (["dup"], [])  # now a ghost: no item key
    assert queue.deep_clean() == CleanReport((), 1)
    assert lists(r, prefix) == ([], [])
    assert fleet.lease(r, 30, block=False) is None  # not Item(b"", "dup")
    assert keys(r) == set()


# --- leases under both names ----------------------------------------------------------------------


def test_a_flat_fleet_shares_the_queue_with_g1(
    fr: redis.Redis, frozen_server: RedisServer, prefix: str
) -> None:
    """Profile flat next to 0.1.5 (SPEC §18): both lease and complete; a flat lease sits in
    ``P:in_flight``, where 0.1.5's cleaner never looks, and an RWQ/1 light clean recovers it."""
    flat, fleet = WorkQueue(fr, prefix, flat_in_flight=True), g1(prefix)
    assert flat.add_many([("a", b"A"), ("b", b"B"), ("c", b"C")]) == [True] * 3
    held = flat.lease(1000)
    theirs = fleet.lease(fr, 30, block=False)
    assert held is not None
    assert theirs is not None
    assert (held.id, theirs.id()) == ("a", "b")
    assert lists(fr, prefix) == (["c"], ["b"])
    assert fr.zrange(f"{prefix}:in_flight", 0, -1) == [b"a"]
    assert flat.counts().processing == 2  # LLEN processing alone would say 1

    frozen_server.advance(1000 + SLACK_MS)  # the flat lease has expired
    fleet.light_clean(fr)
    assert lists(fr, prefix) == (["c"], ["b"])  # 0.1.5 does not see flat leases
    assert flat.light_clean() == CleanReport(("a",), 0)
    assert lists(fr, prefix) == (["a", "c"], ["b"])
    assert not fr.exists(f"{prefix}:in_flight")

    assert fleet.complete(fr, theirs) is True
    again = fleet.lease(fr, 30, block=False)
    assert again is not None
    assert again.id() == "c"
    assert flat.complete(again.id()) is True  # a flat client completes a listed lease
    last = flat.lease(30_000)
    assert last is not None
    assert last.id == "a"
    assert last.data == b"A"
    assert flat.complete(last) is True
    assert keys(fr) == set()


def test_g1_light_clean_respects_rwq_legacy_lease_until_it_expires(
    fr: redis.Redis, frozen_server: RedisServer, prefix: str
) -> None:
    queue, fleet = WorkQueue(fr, prefix, legacy_lease_key=True), g1(prefix)
    assert queue.add("a", b"A")
    held = queue.lease(5000)
    assert held is not None
    assert fr.get(f"{prefix}:leased_by_session:a") == held.token.encode()
    assert fr.pttl(f"{prefix}:leased_by_session:a") == fr.pttl(f"{prefix}:lease:a") == 5000

    fleet.light_clean(fr)
    assert lists(fr, prefix) == ([], ["a"])
    frozen_server.advance(4000)
    assert queue.renew(held, 5000) is True  # renews the legacy key as well
    assert fr.pttl(f"{prefix}:leased_by_session:a") == 5000
    frozen_server.advance(4000)  # past the first lease's end, inside the renewed one
    fleet.light_clean(fr)
    assert lists(fr, prefix) == ([], ["a"])
    assert not fr.exists(f"{prefix}:cleaning")

    frozen_server.advance(1000 + SLACK_MS)  # the renewed lease has expired
    fleet.light_clean(fr)
    assert lists(fr, prefix) == (["a"], [])
    item = fleet.lease(fr, 30, block=False)
    assert item is not None
    assert (item.id(), item.data()) == ("a", b"A")
    assert fleet.complete(fr, item) is True
    assert queue.complete(held) is False
    assert keys(fr) == set()


def test_without_legacy_lease_key_g1_light_clean_requeues_rwq_held_items(r: redis.Redis, prefix: str) -> None:
    # Why the option exists; and rwq's complete then removes the requeued copy (no ghost).
    queue, fleet = WorkQueue(r, prefix), g1(prefix)
    assert queue.add("a", b"A")
    held = queue.lease(60_000)
    assert held is not None
    fleet.light_clean(r)
    assert lists(r, prefix) == (["a"], [])
    assert queue.complete(held) is True
    assert lists(r, prefix) == ([], [])
    assert fleet.lease(r, 30, block=False) is None
    assert keys(r) == set()


def test_rwq_cleaners_respect_a_g1_lease_until_it_expires(
    fr: redis.Redis, frozen_server: RedisServer, prefix: str
) -> None:
    queue, fleet = WorkQueue(fr, prefix), g1(prefix)
    fleet.add_item(fr, Item(b"A", id="a"))
    item = fleet.lease(fr, 10, block=False)
    assert item is not None
    assert item.data() == b"A"
    assert fr.pttl(f"{prefix}:leased_by_session:a") == 10_000

    assert queue.light_clean() == NOTHING
    assert queue.deep_clean() == NOTHING
    assert queue.lease(1000) is None
    frozen_server.advance(10_000 - SLACK_MS)
    assert queue.light_clean() == NOTHING
    assert queue.deep_clean() == NOTHING
    assert lists(fr, prefix) == ([], ["a"])

    frozen_server.advance(2 * SLACK_MS)
    assert queue.light_clean() == CleanReport(("a",), 0)
    assert lists(fr, prefix) == (["a"], [])
    held = queue.lease(10_000)
    assert held is not None
    assert (held.id, held.data) == ("a", b"A")
    # The slow 0.1.5 worker finishes first; it is the first completer, rwq's worker is not.
    assert fleet.complete(fr, item) is True
    assert queue.complete(held) is False
    assert keys(fr) == set()


def test_rwq_deep_clean_respects_a_g1_lease_on_an_orphan(
    fr: redis.Redis, frozen_server: RedisServer, prefix: str
) -> None:
    queue, fleet = WorkQueue(fr, prefix), g1(prefix)
    fleet.add_item(fr, Item(b"O", id="o"))
    item = fleet.lease(fr, 10, block=False)
    assert item is not None
    # 0.1.5's complete crashed after its first step (LREM): the item is in no list (§4.2 point 8).
    assert fr.lrem(f"{prefix}:processing", 0, "o") == 1

    assert queue.deep_clean() == NOTHING
    assert queue.light_clean() == NOTHING
    assert lists(fr, prefix) == ([], [])
    frozen_server.advance(10_000 + SLACK_MS)
    assert queue.deep_clean() == CleanReport(("o",), 0)
    again = fleet.lease(fr, 10, block=False)
    assert again is not None
    assert (again.id(), again.data()) == ("o", b"O")
    assert fleet.complete(fr, again) is True
    assert keys(fr) == set()


# --- completion across generations ----------------------------------------------------------------


def test_rwq_complete_deletes_the_g1_lease_and_a_late_g1_complete_resurrects_nothing(
    r: redis.Redis, prefix: str
) -> None:
    queue, fleet = WorkQueue(r, prefix), g1(prefix)
    assert queue.add("a", b"A")
    item = fleet.lease(r, 30, block=False)
    assert item is not None
    assert r.exists(f"{prefix}:leased_by_session:a")

    assert queue.complete("a") is True
    assert keys(r) == set()  # item, processing entry and the leased_by_session key are gone
    assert fleet.complete(r, item) is False
    fleet.light_clean(r)
    assert fleet.lease(r, 30, block=False) is None
    assert queue.counts().queued == queue.counts().processing == 0
    assert keys(r) == set()


def test_rwq_completes_an_item_a_g1_worker_dropped_and_the_late_g1_complete_is_false(
    fr: redis.Redis, frozen_server: RedisServer, prefix: str
) -> None:
    queue, fleet = WorkQueue(fr, prefix, legacy_lease_key=True), g1(prefix)
    fleet.add_item(fr, Item(b"A", id="a"))
    slow = fleet.lease(fr, 1, block=False)
    assert slow is not None
    frozen_server.advance(1000 + SLACK_MS)
    assert queue.light_clean() == CleanReport(("a",), 0)
    held = queue.lease(30_000)
    assert held is not None
    assert held.data == b"A"
    assert fr.exists(f"{prefix}:leased_by_session:a")  # rwq's own legacy lease

    assert queue.complete(held) is True
    assert keys(fr) == set()
    assert fleet.complete(fr, slow) is False
    fleet.light_clean(fr)
    assert keys(fr) == set()


def test_g1_completes_first_an_item_rwq_leased(
    fr: redis.Redis, frozen_server: RedisServer, prefix: str
) -> None:
    queue, fleet = WorkQueue(fr, prefix, legacy_lease_key=True), g1(prefix)
    assert queue.add("a", b"A")
    held = queue.lease(5000)
    assert held is not None
    frozen_server.advance(5000 + SLACK_MS)
    fleet.light_clean(fr)  # the rwq worker is gone: 0.1.5's cleaner puts the item back
    item = fleet.lease(fr, 30, block=False)
    assert item is not None
    assert (item.id(), item.data()) == ("a", b"A")
    assert fleet.complete(fr, item) is True
    assert queue.complete(held) is False
    assert queue.lease(1000) is None
    assert keys(fr) == set()


# --- ghosts never reach a 0.1.5 worker ------------------------------------------------------------


def test_rwq_light_clean_drops_a_processing_ghost_a_g1_cleaner_would_hand_out(
    r: redis.Redis, prefix: str
) -> None:
    control = f"{prefix}-control"
    for name in (prefix, control):  # an id left in processing by a crashed foreign client, no item
        r.lpush(f"{name}:processing", "ghost")

    # Control: with only 0.1.5 cleaning, a 0.1.5 worker gets the ghost with an empty payload.
    g1(control).light_clean(r)
    ghost = g1(control).lease(r, 30, block=False)
    assert ghost is not None
    assert (ghost.id(), ghost.data()) == ("ghost", b"")
    r.delete(f"{control}:processing", f"{control}:leased_by_session:ghost")

    queue, fleet = WorkQueue(r, prefix), g1(prefix)
    assert queue.light_clean() == CleanReport((), 1)
    fleet.light_clean(r)
    assert fleet.lease(r, 30, block=False) is None
    assert keys(r) == set()


def test_rwq_deep_clean_drops_a_queued_ghost_before_a_g1_worker_meets_it(r: redis.Redis, prefix: str) -> None:
    queue, fleet = WorkQueue(r, prefix), g1(prefix)
    r.lpush(f"{prefix}:queue", "ghost")  # at the right end: it would be leased first
    assert queue.add("real", b"R")
    assert queue.deep_clean() == CleanReport((), 1)
    item = fleet.lease(r, 30, block=False)
    assert item is not None
    assert (item.id(), item.data()) == ("real", b"R")
    assert fleet.lease(r, 30, block=False) is None
    assert fleet.complete(r, item) is True
    assert keys(r) == set()


def test_rwq_lease_consumes_queued_ghosts(r: redis.Redis, prefix: str) -> None:
    queue, fleet = WorkQueue(r, prefix), g1(prefix)
    r.lpush(f"{prefix}:queue", "ghost")
    assert queue.add("real", b"R")
    held = queue.lease(30_000)
    assert held is not None
    assert held.id == "real"
    assert lists(r, prefix) == ([], ["real"])  # the ghost was dropped, not parked anywhere
    assert fleet.lease(r, 30, block=False) is None
    assert queue.complete(held) is True
    assert keys(r) == set()


def test_rwq_complete_removes_the_copy_its_cleaner_requeued(
    fr: redis.Redis, frozen_server: RedisServer, prefix: str
) -> None:
    queue, fleet = WorkQueue(fr, prefix), g1(prefix)
    assert queue.add("a", b"A")
    slow = queue.lease(1000)
    assert slow is not None
    frozen_server.advance(1000 + SLACK_MS)
    assert queue.light_clean() == CleanReport(("a",), 0)
    assert queue.complete(slow) is True  # the slow worker finished after all
    assert lists(fr, prefix) == ([], [])
    assert fleet.lease(fr, 30, block=False) is None  # no Item(b"", "a")
    assert keys(fr) == set()


# --- races between a 0.1.5 lease and an rwq cleaner -----------------------------------------------


def test_rwq_lease_keeps_the_g1_holders_entry_after_a_cleaner_raced_its_lease(
    fr: redis.Redis, frozen_server: RedisServer, prefix: str
) -> None:
    """An rwq cleaner runs inside 0.1.5's lease window; the item must still complete once.

    0.1.5's lease is RPOPLPUSH, GET, SETEX. An rwq light_clean between RPOPLPUSH and SETEX sees
    no lease and requeues the id, then the 0.1.5 worker sets its lease: the id is in the queue,
    held by a live ``leased_by_session`` lease, and no longer in processing. An rwq lease that
    then pops it must not hand it out, and must leave one entry in processing, because 0.1.5's
    complete succeeds only if it can LREM the id from processing.
    """
    queue, fleet = WorkQueue(fr, prefix), g1(prefix)
    assert queue.add("a", b"A")
    reports: list[CleanReport] = []
    item = fleet.lease(
        CleanerBetweenPopAndSetex(fr, lambda: reports.append(queue.light_clean())), 10, block=False
    )
    assert reports == [CleanReport(("a",), 0)]
    assert item is not None
    assert (item.id(), item.data()) == ("a", b"A")
    assert lists(fr, prefix) == (["a"], [])
    assert fr.exists(f"{prefix}:leased_by_session:a")

    assert queue.lease(10_000) is None  # held by the 0.1.5 worker
    assert lists(fr, prefix) == ([], ["a"]), "rwq's lease dropped the only entry of a held item"
    assert fleet.complete(fr, item) is True
    assert keys(fr) == set()


def test_an_id_re_added_after_a_g1_complete_is_not_orphaned_by_the_lingering_rwq_lease(
    fr: redis.Redis, frozen_server: RedisServer, prefix: str
) -> None:
    """0.1.5's complete leaves ``P:lease:<id>`` behind (research note §8 rule 11).

    A 0.1.5 worker's lease expired, rwq requeued the item and an rwq worker leased it and
    crashed; then the slow 0.1.5 worker completed it (True: its LREM found the rwq entry). The
    rwq lease key lingers for its TTL. When the id is added again (content-derived ids), the new
    item must not fall out of both lists.
    """
    queue, fleet = WorkQueue(fr, prefix), g1(prefix)
    fleet.add_item(fr, Item(b"v1", id="x"))
    slow = fleet.lease(fr, 1, block=False)
    assert slow is not None
    frozen_server.advance(1000 + SLACK_MS)
    assert queue.light_clean() == CleanReport(("x",), 0)
    crashed = queue.lease(60_000)
    assert crashed is not None
    assert fleet.complete(fr, slow) is True
    assert keys(fr) == {f"{prefix}:lease:x"}

    assert queue.add("x", b"v2") is True
    first_try = queue.lease(60_000)
    queued, processing = lists(fr, prefix)
    assert first_try is not None or "x" in queued + processing, "the re-added item is in no list"
    if first_try is None:  # kept until the stale lease is gone, then recovered by a light clean
        frozen_server.advance(60_000 + SLACK_MS)
        assert queue.light_clean() == CleanReport(("x",), 0)
        first_try = queue.lease(60_000)
    assert first_try is not None
    assert first_try.data == b"v2"
    assert queue.complete(first_try) is True
    assert keys(fr) == set()
