"""Reading a queue's lists straight from Redis, for assertions in the client tests."""

from __future__ import annotations

import redis

from rwq import AsyncWorkQueue, WorkQueue


def ids(raw: list[bytes]) -> list[str]:
    return [item.decode() for item in raw]


def queue_list(r: redis.Redis, q: WorkQueue | AsyncWorkQueue) -> list[str]:
    """``<P>:queue`` from head (newest) to tail (next to lease)."""
    return ids(r.lrange(q.keys.queue, 0, -1))  # type: ignore[arg-type]


def processing_list(r: redis.Redis, q: WorkQueue | AsyncWorkQueue) -> list[str]:
    """``<P>:processing`` from head (most recent lease) to tail (oldest)."""
    return ids(r.lrange(q.keys.processing, 0, -1))  # type: ignore[arg-type]
