"""Blind mutant (issue #25): on a sharded queue a worker beats on the shard its id routes to, as
items do, while ``workers`` lists shard 0 (SPEC §21: workers register on shard 0; RWQ-LIVE-002,
RWQ-LIVE-003)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import live, sharding
from rwq.protocol.sharding import OnShard, ShardLayout, ShardPlan


def _beat(layout: ShardLayout, worker: str, ttl_ms: int, record: Mapping[str, Any]) -> ShardPlan[live.Beat]:
    live.worker_id(worker)
    live.record_json(record)
    return (yield OnShard(layout.shard_of(worker), "worker_beat", (worker, ttl_ms, record)))  # type: ignore[no-any-return]


def _leave(layout: ShardLayout, worker: str) -> ShardPlan[bool]:
    live.worker_id(worker)
    return bool((yield OnShard(layout.shard_of(worker), "worker_leave", (worker,))))


sharding.worker_beat = _beat
sharding.worker_leave = _leave

if __name__ == "__main__":
    serve(WorkQueue)
