"""Mutant: a sharded queue stores a schedule on its shard 0 instead of refusing it: its slots'
ids then route to other shards than the watermark's, which no script call can join
(RWQ-SCHED-016)."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq import sharded
from rwq.client import WorkQueue


def on_shard_0(self: sharded.ShardedWorkQueue, name: str, schedule: Any, data: bytes = b"") -> bool:
    return self.queues[0].put_schedule(name, schedule, data)


sharded.ShardedWorkQueue.put_schedule = on_shard_0  # type: ignore[method-assign]

if __name__ == "__main__":
    serve(WorkQueue)
