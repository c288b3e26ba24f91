"""Mutant: a core client that knows nothing of sharded queues opens ``{P#0}``, shard 0 of queue ``P``."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v


class ShardFormAcceptedQueue(WorkQueue):
    def __init__(self, redis: Any, prefix: str, **options: Any) -> None:
        super().__init__(redis, v.ShardPrefix(prefix) if isinstance(prefix, str) else prefix, **options)


if __name__ == "__main__":
    serve(ShardFormAcceptedQueue)
