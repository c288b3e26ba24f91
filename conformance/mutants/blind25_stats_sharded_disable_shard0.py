"""Blind mutant (issue #25): on a sharded queue ``stats disable`` turns stats off on shard 0 only,
the way the shard that holds the queue's other single keys would (RWQ-STATS-007: enable and
disable act on every shard)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import stats
from rwq.protocol.sharding import OnShard, ShardLayout, ShardPlan


def _disable(layout: ShardLayout) -> ShardPlan[bool]:
    return bool((yield OnShard(0, "disable_stats", (), {})))


stats.sharded_disable = _disable

if __name__ == "__main__":
    serve(WorkQueue)
