"""ShardedWorkQueue (profile sharded, SPEC §19) on a real Redis and a
real 3-master Redis Cluster: routing, fair rotation, everything covering every shard, and bad
input refused before any shard is called."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
import zlib

import pytest
import redis
import redis.asyncio as aioredis
from redis.cluster import RedisCluster

from rwq import (
    CleanReport,
    InvalidArgument,
    InvalidType,
    Job,
    Outcome,
    RetryPolicy,
    ShardMismatch,
    Worker,
)
from rwq.aio_worker import AsyncJob, AsyncWorker
from rwq.conformance.cluster import LocalCluster
from rwq.sharded import AsyncShardedWorkQueue, ShardedWorkQueue

SHARDS = 4


@pytest.fixture
def name() -> str:
    return f"sh-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def sq(r: redis.Redis, name: str) -> ShardedWorkQueue:
    return ShardedWorkQueue(r, name, shards=SHARDS)


def shard_of(item_id: str, shards: int = SHARDS) -> int:
    """The routing rule, computed independently: CRC-32 of the id's UTF-8 bytes, modulo N."""
    return zlib.crc32(item_id.encode()) % shards


def ids_on(shard: int, n: int, tag: str = "i") -> list[str]:
    """``n`` ids that route to ``shard``."""
    found: list[str] = []
    k = 0
    while len(found) < n:
        if shard_of(f"{tag}{k}") == shard:
            found.append(f"{tag}{k}")
        k += 1
    return found


def test_ids_land_on_the_crc32_shard_and_add_stays_idempotent(
    r: redis.Redis, sq: ShardedWorkQueue, name: str
) -> None:
    ids = [f"job-{n}" for n in range(40)]
    assert sq.add_many([(item_id, item_id.encode()) for item_id in ids]) == [True] * 40
    for item_id in ids:
        assert r.get(f"{{{name}#{shard_of(item_id)}}}:item:{item_id}") == item_id.encode()
    assert sq.add("job-7", b"other") is False
    assert sq.add_many([("job-3", b"x"), ("new", b"N"), ("job-9", b"y")]) == [False, True, False]
    assert sq.counts().queued == 41
    assert {shard_of(item_id) for item_id in ids} == set(range(SHARDS))  # the ids do spread


def test_one_consumer_takes_from_each_shard_in_turn(sq: ShardedWorkQueue) -> None:
    for shard in range(SHARDS):
        sq.add_many([(item_id, b"x") for item_id in ids_on(shard, 5, f"s{shard}-")])
    leased = [sq.lease(30_000) for _ in range(2 * SHARDS)]
    shards = [shard_of(held.id) for held in leased if held is not None]
    assert len(shards) == 2 * SHARDS
    for window in (shards[:SHARDS], shards[SHARDS:]):
        assert sorted(window) == list(range(SHARDS)), shards


def test_starvation_bound_n_times_k(sq: ShardedWorkQueue) -> None:
    """The k-th oldest item of a shard is leased within N*k calls of one consumer, however full
    the other shards are."""
    small = ids_on(0, 3, "small-")
    sq.add_many([(item_id, b"x") for item_id in small])
    for shard in range(1, SHARDS):
        sq.add_many([(item_id, b"x") for item_id in ids_on(shard, 40, f"big{shard}-")])
    calls_until: dict[str, int] = {}
    for call in range(1, SHARDS * len(small) + 1):
        held = sq.lease(30_000)
        assert held is not None
        calls_until.setdefault(held.id, call)
    for k, item_id in enumerate(small, start=1):
        assert calls_until.get(item_id, 10**9) <= SHARDS * k, calls_until


def test_operations_route_to_the_item_shard(sq: ShardedWorkQueue) -> None:
    sq.add_many([(f"r{n}", b"x") for n in range(12)])
    leases = sq.lease_many(count=12, lease_ms=30_000)
    assert sorted(lease.id for lease in leases) == sorted(f"r{n}" for n in range(12))
    assert sq.lease_many(count=5, lease_ms=30_000) == []
    assert sq.renew_many(leases, 60_000) == [True] * 12
    assert sq.renew(leases[0], 60_000) is True
    assert sq.release(leases[1]) is True
    assert sq.fail(leases[2], "boom").outcome.name == "RETRY"
    done = sq.complete_many([*leases[3:], "missing"], require_lease=False)
    assert done == [Outcome.DONE] * 9 + [Outcome.GONE]
    assert sq.complete(leases[0], require_lease=True) is True
    counts = sq.counts()
    assert (counts.queued, counts.processing) == (2, 0)


def test_complete_and_lease_keeps_the_rotation(sq: ShardedWorkQueue) -> None:
    for shard in range(SHARDS):
        sq.add_many([(item_id, b"x") for item_id in ids_on(shard, 3, f"c{shard}-")])
    held = sq.lease(30_000)
    assert held is not None
    seen = [shard_of(held.id)]
    for _ in range(2 * SHARDS - 1):
        outcome, held = sq.complete_and_lease(held, 30_000)
        assert outcome is Outcome.DONE
        assert held is not None
        seen.append(shard_of(held.id))
    for start in range(0, 2 * SHARDS, SHARDS):
        assert sorted(seen[start : start + SHARDS]) == list(range(SHARDS)), seen


def test_cleaning_and_dead_letters_cover_every_shard(sq: ShardedWorkQueue) -> None:
    sq.add_many([(item_id, b"x") for shard in range(SHARDS) for item_id in ids_on(shard, 2, f"d{shard}-")])
    for lease in sq.lease_many(count=2 * SHARDS, lease_ms=1):
        assert lease is not None
    time.sleep(0.05)  # every 1 ms lease has expired
    report = sq.light_clean(chunk=1)
    assert len(report.requeued) == 2 * SHARDS
    assert {shard_of(item_id) for item_id in report.requeued} == set(range(SHARDS))
    assert sq.set_retry_policy(RetryPolicy(max_attempts=1, base_ms=0)) is True
    for lease in sq.lease_many(count=2 * SHARDS, lease_ms=30_000):
        assert sq.fail(lease, f"dead on shard {shard_of(lease.id)}").outcome.name == "DEAD"
        time.sleep(0.002)  # distinct dead-letter times
    dead = sq.dead_items(count=100)
    assert len(dead) == 2 * SHARDS
    assert [item.dead_at_ms for item in dead] == sorted((item.dead_at_ms for item in dead), reverse=True)
    assert sq.dead_items(offset=2, count=3) == dead[2:5]
    one = sq.dead_item(dead[0].id)
    assert one is not None
    assert one.data == b"x"
    assert sq.counts().dead == 2 * SHARDS
    assert sq.deep_clean() == CleanReport((), 0)


def test_a_blocked_consumer_wakes_for_an_add_to_any_shard(r: redis.Redis, name: str) -> None:
    consumer = ShardedWorkQueue(r, name, shards=SHARDS)
    producer = ShardedWorkQueue(r, name, shards=SHARDS)
    got: list[object] = []

    def wait() -> None:
        got.append(consumer.lease(30_000, block=True, timeout_ms=10_000))

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(0.3)
    started = time.monotonic()
    assert producer.add(ids_on(3, 1, "late-")[0], b"L") is True
    waiter.join(timeout=15)
    assert not waiter.is_alive()
    held = got[0]
    assert held is not None
    # The add rang the doorbell the consumer waits on (RWQ-SHARD-007): at once, not at the end of
    # a one-second step (a consumer that waited on one shard would take up to a second here).
    assert time.monotonic() - started < 0.5


def test_the_doorbell_is_a_short_lived_hint(r: redis.Redis, sq: ShardedWorkQueue, name: str) -> None:
    """A ring holds at most 16 tokens and lives a second; delayed items ring nothing; a ring that
    fails is logged, and the add it follows still succeeds (RWQ-SHARD-006)."""
    bell = f"{{{name}#bell}}"
    sq.add_many([(f"b{n}", b"") for n in range(40)])
    assert r.llen(bell) == 16
    assert 0 < r.pttl(bell) <= 1000
    r.delete(bell)
    sq.add_many([("later", b"")], delay_ms=60_000)
    held = sq.lease(60_000)
    assert held is not None
    sq.release(held, delay_ms=60_000)
    assert r.exists(bell) == 0
    sq.release_many([held])  # no longer held: nothing released, nothing rung
    assert r.exists(bell) == 0


def test_a_failed_ring_is_logged(
    r: redis.Redis, sq: ShardedWorkQueue, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    r.set(f"{{{name}#bell}}", "not a list")
    assert sq.add("a", b"") is True
    logged = [record.getMessage() for record in caplog.records]
    assert any("doorbell" in line and "WRONG_TYPE" in line for line in logged), logged


def test_resharding_offline(r: redis.Redis, name: str) -> None:
    """SPEC §19's procedure: drain, delete {P#0}:shards, start with the new count."""
    two = ShardedWorkQueue(r, name, shards=2)
    two.add_many([(f"x{n}", b"") for n in range(10)])
    with pytest.raises(ShardMismatch):
        ShardedWorkQueue(r, name, shards=3).counts()
    while held := two.lease_many(count=5, lease_ms=60_000):
        two.complete_many(held)
    assert two.counts().queued == two.counts().processing == 0
    r.delete(f"{{{name}#0}}:shards")
    three = ShardedWorkQueue(r, name, shards=3)
    assert three.add_many([(f"x{n}", b"") for n in range(10)]) == [True] * 10
    assert {shard_of(f"x{n}", 3) for n in range(10)} == {0, 1, 2}
    with pytest.raises(ShardMismatch):
        ShardedWorkQueue(r, name, shards=2).counts()  # a client checks once, before its first operation


def test_a_blocking_lease_times_out_empty(r: redis.Redis, name: str) -> None:
    assert ShardedWorkQueue(r, name, shards=SHARDS).lease(1000, block=True, timeout_ms=600) is None


def test_bad_input_is_refused_before_any_shard_is_called(r: redis.Redis, sq: ShardedWorkQueue) -> None:
    with pytest.raises(InvalidType):
        sq.add_many([("a", b"A"), ("b", b"B"), ("c", "not bytes")])  # type: ignore[list-item]
    with pytest.raises(InvalidArgument):
        sq.add_many([("a", b"A"), ("", b"B")])
    with pytest.raises(InvalidArgument):
        sq.complete_many(["a", "b"], require_lease=True)
    with pytest.raises(InvalidArgument):
        sq.lease(1000, timeout_ms=5)
    assert r.dbsize() == 0
    for bad in (0, 1025, True, 2.0):
        with pytest.raises(InvalidArgument):
            ShardedWorkQueue(r, "jobs", shards=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        ShardedWorkQueue(r, "{jobs}", shards=2)


def test_a_client_with_another_shard_count_is_refused(
    r: redis.Redis, sq: ShardedWorkQueue, name: str
) -> None:
    assert sq.add("a", b"A") is True
    assert r.get(f"{{{name}#0}}:shards") == str(SHARDS).encode()
    before = {key: r.dump(key) for key in r.keys("*")}
    other = ShardedWorkQueue(r, name, shards=SHARDS + 1)
    with pytest.raises(ShardMismatch, match=f"has {SHARDS} shards recorded"):
        other.add("b", b"B")
    with pytest.raises(ShardMismatch):
        other.counts()
    assert {key: r.dump(key) for key in r.keys("*")} == before
    assert ShardedWorkQueue(r, name, shards=SHARDS).counts().queued == 1


def test_each_shard_is_an_ordinary_queue(r: redis.Redis, sq: ShardedWorkQueue, name: str) -> None:
    item_id = ids_on(2, 1, "plain-")[0]
    assert sq.queues[2].add(item_id, b"P") is True
    held = sq.lease(30_000)
    assert held is not None
    assert (held.id, held.data) == (item_id, b"P")


def test_shards_spread_over_the_masters_of_a_cluster(cluster: LocalCluster, name: str) -> None:
    client = RedisCluster(host="127.0.0.1", port=cluster.port)
    try:
        sq = ShardedWorkQueue(client, name, shards=6)
        nodes = {client.get_node_from_key(f"{shard}:queue").name for shard in sq.layout.prefixes}  # type: ignore[no-untyped-call]
        assert len(nodes) >= 2, nodes
        assert sq.add_many([(f"c{n}", b"x") for n in range(300)]) == [True] * 300
        drained = 0
        held = sq.lease_many(count=50, lease_ms=30_000)
        while held:
            drained += len(held)
            _outcomes, held = sq.complete_and_lease_many(held, 50, 30_000)
        assert drained == 300
        counts = sq.counts()
        assert (counts.queued, counts.processing) == (0, 0)
    finally:
        client.close()


def test_a_worker_drains_every_shard(r: redis.Redis, sq: ShardedWorkQueue, name: str) -> None:
    ids = [f"w{n}" for n in range(60)]
    sq.add_many([(item_id, item_id.encode()) for item_id in ids])
    seen: list[str] = []
    lock = threading.Lock()

    def handle(job: Job) -> None:
        assert job.data == job.id.encode()
        with lock:
            seen.append(job.id)

    worker = Worker(sq, handle, concurrency=3, lease_ms=5_000, poll_timeout_ms=200)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while worker.stats.completed < len(ids) and time.monotonic() < deadline:
        time.sleep(0.02)
    worker.stop()
    thread.join(10)
    assert not thread.is_alive()
    assert sorted(seen) == sorted(ids)
    counts = sq.counts()
    assert (counts.queued, counts.processing) == (0, 0)
    assert all(
        r.exists(f"{shard}:policy") for shard in sq.layout.prefixes
    )  # the default retry, on every shard


async def test_the_asyncio_shell_and_worker(ar: aioredis.Redis, name: str) -> None:
    aq = AsyncShardedWorkQueue(ar, name, shards=SHARDS)
    for shard in range(SHARDS):
        await aq.add_many([(item_id, b"x") for item_id in ids_on(shard, 3, f"a{shard}-")])
    first = [await aq.lease(30_000) for _ in range(SHARDS)]
    assert sorted(shard_of(held.id) for held in first if held is not None) == list(range(SHARDS))
    assert await aq.complete_many([held for held in first if held is not None]) == [Outcome.DONE] * SHARDS
    done: list[str] = []

    async def handle(job: AsyncJob) -> None:
        done.append(job.id)

    worker = AsyncWorker(aq, handle, concurrency=2, lease_ms=5_000, poll_timeout_ms=200)
    task = asyncio.create_task(worker.run())

    async def all_done() -> None:
        while len(done) < 2 * SHARDS:
            await asyncio.sleep(0.02)

    await asyncio.wait_for(all_done(), 20)
    worker.stop()
    await asyncio.wait_for(task, 10)
    assert len(done) == len(set(done)) == 2 * SHARDS
    counts = await aq.counts()
    assert (counts.queued, counts.processing) == (0, 0)


def test_the_fast_path_leases_what_its_shard_lacks_from_the_others(r: redis.Redis, name: str) -> None:
    """complete_and_lease on the shard next in turn tops up from the other shards (RWQ-SHARD-005)."""
    queue = ShardedWorkQueue(r, name, shards=3)
    first = [ids_on(shard, 1, "f")[0] for shard in range(3)]
    queue.add_many([(item_id, b"") for item_id in first])
    held = [one for one in (queue.lease(60_000) for _ in range(3)) if one is not None]
    assert len(held) == 3  # one from each shard; the next turn is held[0]'s
    queue.add_many([(ids_on(shard, 1, "s")[0], b"") for shard in range(3)])
    r.delete(f"{{{name}#{shard_of(held[0].id, 3)}}}:queue")  # its shard has nothing left to lease
    outcomes, leased = queue.complete_and_lease_many([held[0]], 3, 60_000)
    assert outcomes == [Outcome.DONE]
    assert len(leased) == 2


def test_shard_0_decides_the_retry_policy(r: redis.Redis, name: str) -> None:
    """A set cut short (shard 1 holds another policy) and clients racing with different defaults
    end with one policy on every shard: shard 0's (RWQ-SHARD-008)."""
    queue = ShardedWorkQueue(r, name, shards=3)
    queue.queues[1].set_retry_policy(RetryPolicy(max_attempts=9))
    assert queue.set_retry_policy(RetryPolicy(max_attempts=2), if_absent=True) is True
    assert [shard.retry_policy() for shard in queue.queues] == [RetryPolicy(max_attempts=2)] * 3
    assert queue.set_retry_policy(RetryPolicy(max_attempts=5), if_absent=True) is False
    assert [shard.retry_policy() for shard in queue.queues] == [RetryPolicy(max_attempts=2)] * 3
    racers = [ShardedWorkQueue(r, f"{name}-race", shards=8) for _ in range(4)]
    threads = [
        threading.Thread(
            target=one.set_retry_policy, args=(RetryPolicy(max_attempts=n + 1),), kwargs={"if_absent": True}
        )
        for n, one in enumerate(racers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    policies = {shard.retry_policy() for shard in racers[0].queues}
    assert len(policies) == 1
