"""Issue 14 §2: what one queue spread over N shards costs each node of a Redis Cluster.

A 2-core machine cannot show a 3-node cluster's speed-up, so this measures instead the server
CPU per item on each master (``INFO cpu``, before and after a drain of the shipped client) with
1 shard and with N, and reports the throughput that CPU model predicts when each master has a
core of its own: the busiest master's CPU per item bounds it.
"""

from __future__ import annotations

from collections.abc import Callable

import redis
from redis.cluster import RedisCluster

from bench.core import LEASE_MS, Config, Measurement, PeerResult, payload
from rwq.conformance.cluster import LocalCluster, masters
from rwq.sharded import ShardedWorkQueue

Log = Callable[[str], None]
SHARD_COUNTS = (1, 3, 6)
BATCH = 100


def _cpu_us(port: int) -> float:
    """The node's ``used_cpu_sys`` + ``used_cpu_user``, in microseconds."""
    client = redis.Redis(port=port)
    try:
        info = client.info("cpu")
    finally:
        client.close()
    return (float(info["used_cpu_sys"]) + float(info["used_cpu_user"])) * 1e6


def _drain_per_node(
    client: RedisCluster, ports: list[int], name: str, *, shards: int, n: int, data: bytes
) -> dict[int, float]:
    """Fill queue ``name`` with ``n`` items, drain it, and return each master's CPU us per item
    over the drain."""
    queue = ShardedWorkQueue(client, name, shards=shards)
    for start in range(0, n, 1000):
        queue.add_many([(f"i{k}", data) for k in range(start, min(start + 1000, n))])
    before = {port: _cpu_us(port) for port in ports}
    done, held = 0, queue.lease_many(count=BATCH, lease_ms=LEASE_MS)
    while held:
        done += len(held)
        _outcomes, held = queue.complete_and_lease_many(held, BATCH, LEASE_MS)
    if done != n:
        raise RuntimeError(f"drained {done} of {n}")
    return {port: (_cpu_us(port) - before[port]) / done for port in ports}


def shard_cpu(config: Config, log: Log) -> Measurement:
    """Server CPU per item on each master, and the predicted throughput, for 1 and N shards."""
    n = max(2_000, config.n // 2)
    m = Measurement(
        "shard_cpu",
        f"one queue over 1, 3 and 6 shards on a 3-master cluster: predicted items/s, {n:,} items",
        "items/s",
        "higher",
    )
    m.notes.append(
        "drain with lease_many + complete_and_lease_many (100 per call) by one client; CPU per "
        "item on each master from INFO cpu (sys + user) over the drain only; the prediction is "
        "1e6 / the busiest master's us per item, each master on a core of its own; the fill is "
        "not measured; a warm-up drain first, then the least disturbed of --repeats runs"
    )
    data = payload()
    cluster = LocalCluster().start()
    try:
        client = RedisCluster(host="127.0.0.1", port=cluster.port)
        ports = [node.port for node in masters(f"redis://127.0.0.1:{cluster.port}")]
        # A warm-up first: scripts loaded and memory touched on every master.
        _drain_per_node(client, ports, "warm-up", shards=max(SHARD_COUNTS), n=2_000, data=data)
        for shards in SHARD_COUNTS:
            runs = [
                _drain_per_node(client, ports, f"cpu{shards}-{run}", shards=shards, n=n, data=data)
                for run in range(config.repeats)
            ]
            per_item = min(runs, key=lambda run: max(run.values()))  # the least disturbed run
            done = n
            busiest = max(per_item.values())
            predicted = 1e6 / busiest
            detail = {
                f"us_per_item_node_{i}": us for i, us in enumerate(sorted(per_item.values(), reverse=True))
            }
            detail["us_per_item_all_nodes"] = sum(per_item.values())
            m.results[f"rwq-{shards}-shards"] = PeerResult(
                predicted,
                [predicted],
                done,
                f"ShardedWorkQueue(shards={shards}), busiest master bounds",
                detail,
            )
            log(
                f"shard_cpu {shards} shards: us/item per master "
                + ", ".join(f"{us:.1f}" for us in sorted(per_item.values(), reverse=True))
                + f"; predicted {predicted:,.0f} items/s"
            )
        client.close()
    finally:
        cluster.stop()
    return m
