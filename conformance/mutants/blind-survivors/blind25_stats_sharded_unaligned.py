"""Blind mutant (issue #25): a sharded queue's statistics are summed position by position, each
shard's series as it was read, without aligning shards read in different minutes on one minute
(RWQ-STATS-007: the shards summed minute by minute)."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import stats
from rwq.protocol.stats import QueueStats, StatCounts


def _summed(shards: Sequence[QueueStats]) -> QueueStats:
    latest = max(shards, key=lambda s: s.now_ms)
    series = [StatCounts()] * stats.MINUTES
    for shard in shards:
        for i, counts in enumerate(shard.series):
            series[i] = series[i] + counts
    enabled = all(shard.enabled for shard in shards)
    since = max(shard.since_ms or 0 for shard in shards) if enabled else None
    return QueueStats(enabled, since, latest.now_ms, latest.minute, tuple(series))


stats.summed = _summed

if __name__ == "__main__":
    serve(WorkQueue)
