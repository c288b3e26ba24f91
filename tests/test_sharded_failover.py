"""Profile sharded through failovers on a real local Redis Cluster with replicas (SPEC §19, "Redis
Cluster"; issue #14 §2): three masters with one replica each, a ShardedWorkQueue of six shards
spread over all three, a producer adding with ``wait_replicas=1`` (profile ack, SPEC §17) and
workers leasing and completing while a master fails over:

- gracefully, ``CLUSTER FAILOVER`` sent to its replica;
- by SIGKILL of the master: the cluster promotes its replica by itself once the node timeout
  (shortened to 2 s here) has passed, then a new node is attached as the new master's replica,
  as an operator would replace the lost node, so that WAIT can be acknowledged again.

The clients retry every error (at least once): an add that raised is ambiguous and is tried
again; only an add that returned is acknowledged. Leases lost with the dead master come back by
light_clean (leases of 800 ms). Nothing acknowledged may be lost: every acknowledged id is
completed, and the queue ends empty. Run with ``-s`` to see the counts.
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
import redis
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.cluster import RedisCluster
from redis.crc import key_slot
from redis.exceptions import RedisClusterException

from rwq.conformance.cluster import LocalCluster
from rwq.conformance.redis_server import RedisServer, RedisUnavailable, redis_server_binary
from rwq.errors import RwqError
from rwq.sharded import AsyncShardedWorkQueue, ShardedWorkQueue

SHARDS = 6
ITEMS = 2000
LEASE_MS = 800
NODE_TIMEOUT_MS = 2000
WAIT_TIMEOUT_MS = 2000
TAKEOVER_AFTER_S = 15.0  # a SIGKILLed master's replica not elected by then takes over (see wait_promoted)
TEST_DEADLINE_S = 60.0
ADD_BUDGET_S = 15.0
"""How long the producer keeps retrying one id before it gives up on it (it stays ambiguous)."""
FAULT_AT = ITEMS // 3
"""The fault comes once this many adds are acknowledged: the drain is well under way."""
WORKERS = 3
"""Each leases 10 items at a time and holds them 20 ms: about 1,500 items a second between them,
as fast as the producer adds."""
ERRORS = (RwqError, redis.RedisError, RedisClusterException)


@pytest.fixture
def replicated() -> Iterator[LocalCluster]:
    """Three masters, one replica each, node timeout 2 s; stopped whatever the test does."""
    try:
        redis_server_binary()
    except RedisUnavailable as exc:
        pytest.skip(str(exc))
    nodes = LocalCluster(replicas=1, node_timeout_ms=NODE_TIMEOUT_MS).start()
    try:
        yield nodes
    finally:
        nodes.stop()


def spread_name(cluster: LocalCluster) -> str:
    """A queue name whose shards sit on all three masters."""
    for n in range(1000):
        name = f"failover-{n}"
        owners = {cluster.master_of_slot(shard_slot(name, i)).port for i in range(SHARDS)}
        if len(owners) == len(cluster.servers):
            return name
    raise AssertionError("no queue name spreads its shards over every master")


def shard_slot(name: str, shard: int) -> int:
    return key_slot(f"{name}#{shard}".encode())


def connect(cluster: LocalCluster) -> RedisCluster:
    return RedisCluster(host="127.0.0.1", port=cluster.port, socket_timeout=5, socket_connect_timeout=2)


@dataclass
class Drain:
    """A producer, workers and a cleaner on one sharded queue, each with its own cluster client;
    what they saw, under one lock."""

    cluster: LocalCluster
    name: str
    stop: threading.Event = field(default_factory=threading.Event)
    producer_done: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    acked: set[str] = field(default_factory=set)
    ambiguous_attempts: int = 0
    never_acked: set[str] = field(default_factory=set)
    leased: collections.Counter[str] = field(default_factory=collections.Counter)
    completed: set[str] = field(default_factory=set)
    """Ids whose complete returned (True or False)."""
    complete_raised: set[str] = field(default_factory=set)
    """Ids whose complete raised: it may have taken effect; if it did not, the item comes back."""
    requeued: int = 0
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    samples: dict[str, str] = field(default_factory=dict)
    """The first message of each kind of error."""
    threads: list[threading.Thread] = field(default_factory=list)
    clients: list[RedisCluster] = field(default_factory=list)
    crashed: list[BaseException] = field(default_factory=list)

    def queue(self) -> ShardedWorkQueue:
        client = connect(self.cluster)
        with self.lock:
            self.clients.append(client)
        return ShardedWorkQueue(
            client, self.name, shards=SHARDS, wait_replicas=1, wait_timeout_ms=WAIT_TIMEOUT_MS
        )

    def error(self, where: str, exc: BaseException) -> None:
        with self.lock:
            kind = f"{where}: {type(exc).__name__}"
            self.errors[kind] += 1
            self.samples.setdefault(kind, str(exc)[:200])

    def start(self) -> None:
        self._spawn(self._produce)
        for _ in range(WORKERS):
            self._spawn(self._work)
        self._spawn(self._clean)

    def _spawn(self, target: Callable[[], None]) -> None:
        def run() -> None:
            try:
                target()
            except BaseException as exc:  # a loop that dies is a test failure, not a hang
                self.crashed.append(exc)
                raise

        thread = threading.Thread(target=run, daemon=True)
        self.threads.append(thread)
        thread.start()

    def _produce(self) -> None:
        sq = self.queue()
        try:
            for n in range(ITEMS):
                item_id = f"j{n}"
                give_up = time.monotonic() + ADD_BUDGET_S
                while not self.stop.is_set():
                    try:
                        sq.add(item_id, item_id.encode())  # False: an earlier ambiguous try added it
                    except ERRORS as exc:
                        self.error("add", exc)
                        with self.lock:
                            self.ambiguous_attempts += 1
                        if time.monotonic() > give_up:
                            with self.lock:
                                self.never_acked.add(item_id)
                            break
                        time.sleep(0.05)
                    else:
                        with self.lock:
                            self.acked.add(item_id)
                        break
                time.sleep(0.002)  # spread the adds over a few seconds: the drain runs meanwhile
        finally:
            self.producer_done.set()

    def _work(self) -> None:
        sq = self.queue()
        while not self.stop.is_set():
            try:
                leases = sq.lease_many(count=10, lease_ms=LEASE_MS)
            except ERRORS as exc:
                self.error("lease", exc)
                time.sleep(0.05)
                continue
            if not leases:
                time.sleep(0.01)
                continue
            with self.lock:
                self.leased.update(lease.id for lease in leases)
            time.sleep(0.02)  # the work: leases are held when the fault comes
            for lease in leases:
                try:
                    sq.complete(lease)
                except ERRORS as exc:
                    self.error("complete", exc)
                    with self.lock:
                        self.complete_raised.add(lease.id)
                else:
                    with self.lock:
                        self.completed.add(lease.id)

    def _clean(self) -> None:
        sq = self.queue()
        while not self.stop.wait(0.25):
            try:
                report = sq.light_clean()
            except ERRORS as exc:
                self.error("light_clean", exc)
            else:
                with self.lock:
                    self.requeued += len(report.requeued)

    def acked_count(self) -> int:
        with self.lock:
            return len(self.acked)

    def drained(self, sq: ShardedWorkQueue) -> bool:
        """The producer is done, every acknowledged id was completed, and the queue is empty."""
        if not self.producer_done.is_set():
            return False
        with self.lock:
            if not self.acked <= self.completed | self.complete_raised:
                return False
        try:
            counts = sq.counts()
        except ERRORS as exc:
            self.error("counts", exc)
            return False
        return counts.queued == counts.processing == counts.delayed == 0

    def finish(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(15)
        for client in self.clients:
            client.close()


def run_drain(cluster: LocalCluster, fault: Callable[[RedisServer], str]) -> None:
    """Drain ITEMS through a fault of the master that serves shard 0 (its count, at
    ``{P#0}:shards``, lives there too), then check that nothing acknowledged was lost."""
    started = time.monotonic()
    deadline = started + TEST_DEADLINE_S
    name = spread_name(cluster)
    victim = cluster.master_of_slot(shard_slot(name, 0))
    drain = Drain(cluster, name)
    checker_client = connect(cluster)
    try:
        checker = ShardedWorkQueue(checker_client, name, shards=SHARDS)
        drain.start()
        while drain.acked_count() < FAULT_AT:
            assert time.monotonic() < deadline, "the producer never reached the fault point"
            assert not drain.crashed, drain.crashed
            time.sleep(0.01)
        fault_at = time.monotonic()
        how = fault(victim)
        recovered_at = time.monotonic()
        while not drain.drained(checker):
            assert not drain.crashed, drain.crashed
            assert time.monotonic() < deadline, (
                f"not drained within {TEST_DEADLINE_S} s: {len(drain.acked)} acknowledged, "
                f"{len(drain.acked - drain.completed - drain.complete_raised)} of them never completed, "
                f"errors {dict(drain.errors)}, first of each {drain.samples}"
            )
            time.sleep(0.1)
        drained_at = time.monotonic()
    finally:
        drain.finish()
        checker_client.close()
    assert not drain.crashed, drain.crashed
    final_client = connect(cluster)
    try:
        counts = ShardedWorkQueue(final_client, name, shards=SHARDS).counts()
    finally:
        final_client.close()
    redeliveries = sum(times - 1 for times in drain.leased.values())
    print(
        f"\n{how}: victim 127.0.0.1:{victim.port}; "
        f"acknowledged adds {len(drain.acked)}, ambiguous add attempts {drain.ambiguous_attempts}, "
        f"ids never acknowledged {len(drain.never_acked)}; "
        f"completions {len(drain.completed)} returned + {len(drain.complete_raised - drain.completed)} "
        f"raised only; leases {drain.leased.total()} of {len(drain.leased)} ids, "
        f"redeliveries {redeliveries}, requeued by light_clean {drain.requeued}; "
        f"errors {dict(drain.errors)}, first of each {drain.samples}; "
        f"fault at {fault_at - started:.1f} s, recovered in {recovered_at - fault_at:.1f} s, "
        f"drained at {drained_at - started:.1f} s; final counts {counts}"
    )
    lost = drain.acked - drain.completed - drain.complete_raised
    assert not lost, f"acknowledged adds never completed: {sorted(lost)[:20]}"
    assert drain.acked | drain.never_acked == {f"j{n}" for n in range(ITEMS)}
    assert (counts.queued, counts.processing, counts.delayed) == (0, 0, 0)
    assert len(drain.acked) >= FAULT_AT


def test_cluster_failover_during_a_drain_loses_nothing_acknowledged(replicated: LocalCluster) -> None:
    def fail_over(victim: RedisServer) -> str:
        replica = replicated.replica_of(victim)
        with replica.client(socket_timeout=10) as client:
            client.execute_command("CLUSTER", "FAILOVER")
        replicated.wait_promoted(replica)
        assert replicated.role(victim) == "slave"  # the old master follows its replica now
        return "CLUSTER FAILOVER"

    run_drain(replicated, fail_over)


def test_a_master_killed_during_a_drain_loses_nothing_acknowledged(replicated: LocalCluster) -> None:
    def kill(victim: RedisServer) -> str:
        replica = replicated.replica_of(victim)
        replicated.kill(victim)
        replicated.wait_promoted(replica, takeover_after_s=TAKEOVER_AFTER_S)  # by the cluster, as a rule
        replicated.add_replica(replica)  # the lost node replaced: WAIT can be acknowledged again
        return "SIGKILL"

    run_drain(replicated, kill)


async def test_an_asyncio_client_follows_the_replica_that_took_over(replicated: LocalCluster) -> None:
    """After a master is SIGKILLed and its replica promoted, a long-lived ``redis.asyncio`` client
    reaches the new master (its slot map is reloaded when the dead node refuses the connection)
    and finds every acknowledged add there."""
    name = spread_name(replicated)
    client = AsyncRedisCluster(
        host="127.0.0.1", port=replicated.port, socket_timeout=5, socket_connect_timeout=2
    )
    try:
        queue = AsyncShardedWorkQueue(
            client, name, shards=SHARDS, wait_replicas=1, wait_timeout_ms=WAIT_TIMEOUT_MS
        )
        assert await queue.add_many([(f"a{n}", b"") for n in range(60)]) == [True] * 60
        victim = replicated.master_of_slot(shard_slot(name, 0))
        replica = replicated.replica_of(victim)
        replicated.kill(victim)
        replicated.wait_promoted(replica, takeover_after_s=TAKEOVER_AFTER_S)
        deadline = time.monotonic() + 20
        while True:
            try:
                counts = await queue.counts()
                break
            except RwqError:
                assert time.monotonic() < deadline, "the client never reached the promoted master"
                await asyncio.sleep(0.2)
        assert (counts.queued, counts.processing) == (60, 0)
    finally:
        await client.aclose()
