"""Mutant: a sharded queue turns stats on and off on shard 0 only (RWQ-STATS-007): the other
shards count nothing, and a read sums one shard's counts."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import stats
from rwq.protocol.sharding import OnShard, ShardLayout, ShardPlan


def sharded_enable(layout: ShardLayout) -> ShardPlan[bool]:
    return bool((yield OnShard(0, "enable_stats", (), {})))


def sharded_disable(layout: ShardLayout) -> ShardPlan[bool]:
    return bool((yield OnShard(0, "disable_stats", (), {})))


stats.sharded_enable = sharded_enable
stats.sharded_disable = sharded_disable

if __name__ == "__main__":
    serve(WorkQueue)
