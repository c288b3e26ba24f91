"""Blind mutant (issue #25): a sharded queue's statistics read as on when any shard has them on,
not only when every shard does (RWQ-STATS-007; the adapter protocol's ``enabled``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import stats
from rwq.protocol.stats import QueueStats

_canonical = stats.summed


def _summed(shards: Sequence[QueueStats]) -> QueueStats:
    total = _canonical(shards)
    if total.enabled or not any(shard.enabled for shard in shards):
        return total
    since = max(shard.since_ms or 0 for shard in shards)
    return replace(total, enabled=True, since_ms=since)


stats.summed = _summed

if __name__ == "__main__":
    serve(WorkQueue)
