"""Blind mutant (issue #25, written from SPEC alone): a sharded queue's statistics are read from
shard 0 only, where the queue's single keys live, not summed over every shard (RWQ-STATS-007)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import stats
from rwq.protocol.sharding import OnShard, ShardLayout, ShardPlan
from rwq.protocol.stats import QueueStats


def _read(layout: ShardLayout) -> ShardPlan[QueueStats]:
    return (yield OnShard(0, "stats", (), {}))  # type: ignore[no-any-return]


stats.sharded_stats = _read

if __name__ == "__main__":
    serve(WorkQueue)
