"""The client on a real 3-master Redis Cluster on loopback (sync and asyncio redis-py clients)."""

from __future__ import annotations

import asyncio
import io
import json
import shlex
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
import redis
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.cluster import RedisCluster
from rich.console import Console

from rwq import AsyncWorkQueue, CleanReport, Counts, InvalidArgument, NotReplicated, Outcome, WorkQueue
from rwq.conformance.cluster import SLOT_RANGES, LocalCluster
from rwq.conformance.runner import EXIT_ADAPTER_BROKEN, EXIT_CONFORMS, RunConfig, run


def command(client: Any, *args: Any) -> Any:
    """A raw command (redis-py leaves ``execute_command`` untyped)."""
    return client.execute_command(*args)


@pytest.fixture
def rc(cluster: LocalCluster) -> Iterator[RedisCluster]:
    client = RedisCluster(host="127.0.0.1", port=cluster.port)
    yield client
    client.close()


@pytest.fixture
def tagged() -> str:
    return f"cl:{{{uuid.uuid4().hex[:10]}}}"


@pytest.fixture
def cq(rc: RedisCluster, tagged: str) -> WorkQueue:
    return WorkQueue(rc, tagged)


@pytest.fixture
async def arc(cluster: LocalCluster) -> AsyncIterator[AsyncRedisCluster]:
    client = AsyncRedisCluster(host="127.0.0.1", port=cluster.port)
    await client.initialize()
    yield client
    await client.aclose()


def all_queue_keys(cluster: LocalCluster, prefix: str) -> list[bytes]:
    """Every key of the queue, collected from every master."""
    found: list[bytes] = []
    for node in cluster.servers:
        client = node.client()
        found += cast(list[bytes], client.keys(f"{prefix}*"))
        client.close()
    return sorted(found)


def owner_port(cluster: LocalCluster, key: bytes) -> int:
    """The port of the master that holds ``key`` (it answers EXISTS without a redirection)."""
    client = cluster.servers[0].client()
    slot = int(command(client, "CLUSTER", "KEYSLOT", key))
    client.close()
    for node, (low, high) in zip(cluster.servers, SLOT_RANGES, strict=True):
        if low <= slot <= high:
            return node.port
    raise AssertionError(slot)


def test_cluster_is_three_masters(rc: RedisCluster) -> None:
    client: Any = rc
    assert len(client.get_primaries()) == 3


def test_prefix_without_hash_tag_is_refused_before_any_io(rc: RedisCluster) -> None:
    for bad in ("jobs", "jobs:{}", "jobs:{open", "jobs:}x{"):
        with pytest.raises(InvalidArgument, match="hash tag"):
            WorkQueue(rc, bad)


async def test_async_prefix_without_hash_tag_is_refused_before_any_io(cluster: LocalCluster) -> None:
    client = AsyncRedisCluster(host="127.0.0.1", port=cluster.port)  # never initialized: no I/O yet
    try:
        with pytest.raises(InvalidArgument, match="hash tag"):
            AsyncWorkQueue(client, "jobs")
    finally:
        await client.aclose()


def test_hash_tag_not_needed_outside_cluster(r: redis.Redis) -> None:
    assert WorkQueue(r, "jobs").add("a", b"") is True


def test_sync_add_lease_complete(cluster: LocalCluster, cq: WorkQueue, tagged: str) -> None:
    assert cq.add("a", b"A") is True
    assert cq.add("a", b"again") is False
    assert cq.add_many([("b", b"B"), ("c", b"C"), ("b", b"x")]) == [True, True, False]
    assert cq.counts() == Counts(3, 0)
    held = cq.lease(10_000)
    assert held is not None
    assert (held.id, held.data) == ("a", b"A")
    many = cq.lease_many(count=5, lease_ms=10_000)
    assert [h.id for h in many] == ["b", "c"]
    assert cq.renew(held, 20_000) is True
    assert cq.renew_many(many, 20_000) == [True, True]
    keys = all_queue_keys(cluster, tagged)
    assert len(keys) == 1 + 3 + 3  # processing (the queue is empty), three items, three leases
    assert len({owner_port(cluster, key) for key in keys}) == 1
    assert cq.complete(held) is True
    assert cq.complete(held) is False
    assert cq.complete_many([many[0]], require_lease=True) == [Outcome.DONE]
    assert cq.release(many[1]) is True
    assert cq.counts() == Counts(1, 0)
    again = cq.lease(10_000)
    assert again is not None
    assert again.id == "c"
    assert cq.complete("c") is True
    assert all_queue_keys(cluster, tagged) == []


def test_sync_light_clean(rc: RedisCluster, cq: WorkQueue) -> None:
    cq.add_many([("a", b""), ("b", b""), ("c", b"")])
    cq.lease_many(count=3, lease_ms=60_000)
    rc.delete(cq.keys.lease("b"))
    rc.delete(cq.keys.lease("c"), cq.keys.item("c"))
    assert cq.light_clean() == CleanReport(("b",), 1)
    assert cq.counts() == Counts(1, 1)


def test_sync_deep_clean(cluster: LocalCluster, rc: RedisCluster, cq: WorkQueue, tagged: str) -> None:
    cq.add("listed", b"")
    rc.set(cq.keys.item("orphan"), b"O")
    rc.lpush(cq.keys.queue, "ghost")
    report = cq.deep_clean()
    assert report == CleanReport(("orphan",), 1)
    assert cq.counts() == Counts(2, 0)
    assert not [key for key in all_queue_keys(cluster, tagged) if b"deep_clean" in key]


def test_sync_blocking_lease_wakes_up(cluster: LocalCluster, cq: WorkQueue, tagged: str) -> None:
    producer = RedisCluster(host="127.0.0.1", port=cluster.servers[1].port)
    timer = threading.Timer(0.2, lambda: WorkQueue(producer, tagged).add("late", b"L"))
    timer.start()
    try:
        held = cq.lease(5000, block=True, timeout_ms=10_000)
    finally:
        timer.join()
        producer.close()
    assert held is not None
    assert held.id == "late"
    assert cq.lease(1000, block=True, timeout_ms=200) is None


def flush_scripts(cluster: LocalCluster) -> None:
    for node in cluster.servers:
        client = node.client()
        client.script_flush()
        client.close()


def test_sync_noscript_recovery(cluster: LocalCluster, cq: WorkQueue) -> None:
    cq.add("a", b"")
    flush_scripts(cluster)
    held = cq.lease(5000)
    assert held is not None
    flush_scripts(cluster)
    assert cq.complete(held) is True
    flush_scripts(cluster)
    assert cq.counts() == Counts(0, 0)


async def test_async_noscript_recovery(cluster: LocalCluster, arc: AsyncRedisCluster, tagged: str) -> None:
    aq = AsyncWorkQueue(arc, tagged)
    flush_scripts(cluster)
    assert await aq.add("a", b"") is True
    flush_scripts(cluster)
    assert await aq.light_clean() == CleanReport((), 0)


async def test_async_fresh_client_first_call(cluster: LocalCluster, tagged: str) -> None:
    """A new asyncio RedisCluster, handed straight to AsyncWorkQueue, as an application would."""
    client = AsyncRedisCluster(host="127.0.0.1", port=cluster.port)
    try:
        aq = AsyncWorkQueue(client, tagged)
        assert await aq.add("a", b"A") is True
        assert await aq.counts() == Counts(1, 0)
    finally:
        await client.aclose()


async def test_async_add_lease_complete(arc: AsyncRedisCluster, tagged: str) -> None:
    aq = AsyncWorkQueue(arc, tagged)
    assert await aq.add_many([("a", b"A"), ("b", b"B")]) == [True, True]
    held = await aq.lease(10_000)
    assert held is not None
    assert (held.id, held.data) == ("a", b"A")
    assert await aq.renew(held, 10_000) is True
    assert await aq.complete(held, require_lease=True) is True
    other = await aq.lease_many(count=3, lease_ms=10_000)
    assert [h.id for h in other] == ["b"]
    assert await aq.release(other[0]) is True
    assert await aq.counts() == Counts(1, 0)
    assert await aq.complete("b") is True
    assert await aq.queue_len() == 0 == await aq.processing_len()


async def test_async_light_clean(arc: AsyncRedisCluster, tagged: str) -> None:
    aq = AsyncWorkQueue(arc, tagged)
    await aq.add_many([("a", b""), ("b", b"")])
    await aq.lease_many(count=2, lease_ms=60_000)
    await arc.delete(aq.keys.lease("a"))
    assert await aq.light_clean() == CleanReport(("a",), 0)


async def test_async_deep_clean(arc: AsyncRedisCluster, tagged: str) -> None:
    aq = AsyncWorkQueue(arc, tagged)
    await arc.set(aq.keys.item("orphan"), b"")
    await arc.lpush(aq.keys.processing, "ghost")
    assert await aq.deep_clean() == CleanReport(("orphan",), 1)
    assert await aq.counts() == Counts(1, 0)


async def test_async_blocking_lease(arc: AsyncRedisCluster, tagged: str) -> None:
    aq = AsyncWorkQueue(arc, tagged)

    async def produce() -> None:
        await asyncio.sleep(0.2)
        await aq.add("late", b"L")

    task = asyncio.create_task(produce())
    held = await aq.lease(5000, block=True, timeout_ms=10_000)
    await task
    assert held is not None
    assert held.id == "late"
    assert await aq.lease(1000, block=True, timeout_ms=200) is None


# -- the conformance runner's cluster target ------------------------------------------------------


def _run(tmp_path: Path, adapter: str, cluster: LocalCluster, pattern: str) -> tuple[int, dict[str, Any]]:
    """``rwq conformance --cluster --redis-url <node>`` over the cases matching ``pattern``."""
    out = tmp_path / "out"
    config = RunConfig(
        adapter=adapter,
        out=out,
        redis_url=cluster.url,
        cluster=True,
        pattern=pattern,
        console=Console(file=io.StringIO(), width=200),
    )
    code = run(config)
    return code, json.loads((out / "report.json").read_text())


def test_runner_on_an_existing_cluster(tmp_path: Path, cluster: LocalCluster) -> None:
    """The reference passes group cluster on a cluster given by URL (a running clock: the case
    that needs a frozen one is not applicable), its namespaces on a node other than the seed."""
    adapter = f"{shlex.quote(sys.executable)} -m rwq.conformance.reference_adapter"
    code, report = _run(tmp_path, adapter, cluster, "cluster/**")
    assert code == EXIT_CONFORMS
    statuses = {case["id"]: case["status"] for case in report["cases"]}
    assert statuses == {
        "cluster/prefix/hash-tag-required": "pass",
        "cluster/deep-clean/scan-on-slot-node": "pass",
        "cluster/scripts/on-slot-node": "not-applicable",
    }
    assert report["environment"]["cluster"][0] == cluster.url


def test_runner_refuses_an_adapter_without_cluster_support(tmp_path: Path, cluster: LocalCluster) -> None:
    script = tmp_path / "standalone_only.py"
    script.write_text(
        "from rwq.conformance import reference_adapter\n"
        "hello = reference_adapter.Adapter.hello\n"
        "def standalone_hello(self, args):\n"
        "    reply = hello(self, args)\n"
        "    del reply['capabilities']\n"
        "    return reply\n"
        "reference_adapter.Adapter.hello = standalone_hello\n"
        "reference_adapter.main()\n"
    )
    code, report = _run(
        tmp_path, f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}", cluster, "cluster/**"
    )
    assert code == EXIT_ADAPTER_BROKEN
    assert "does not declare cluster support" in report["aborted"]


def test_sync_wait_goes_to_the_node_of_the_queue(rc: RedisCluster, tagged: str) -> None:
    """Profile ack on a cluster without replicas: the script runs, and its WAIT on the same node
    connection counts none (NOT_REPLICATED); a node-less WAIT would be refused by the client."""
    queue = WorkQueue(rc, tagged, wait_replicas=1, wait_timeout_ms=50)
    with pytest.raises(NotReplicated, match="0 of 1 replicas"):
        queue.add("a", b"x")
    assert WorkQueue(rc, tagged).counts().queued == 1


async def test_async_wait_goes_to_the_node_of_the_queue(arc: AsyncRedisCluster, tagged: str) -> None:
    queue = AsyncWorkQueue(arc, tagged, wait_replicas=1, wait_timeout_ms=50)
    with pytest.raises(NotReplicated, match="0 of 1 replicas"):
        await queue.add("a", b"x")
    lease = await AsyncWorkQueue(arc, tagged).lease(5000)
    assert lease is not None
    with pytest.raises(NotReplicated):
        await queue.complete(lease)
    assert (await AsyncWorkQueue(arc, tagged).counts()).processing == 0
