"""Mutant: a non-blocking lease on an empty queue raises REDIS_ERROR (a nil reply passed on as an
error, as go-redis's ``redis.Nil`` is) instead of returning no item."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import RedisFailure
from rwq.protocol.operations import Lease


class NilIsErrorQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        lease = super().lease(lease_ms, block=block, timeout_ms=timeout_ms)
        if lease is None and not block:
            raise RedisFailure("redis: nil")
        return lease


if __name__ == "__main__":
    serve(NilIsErrorQueue)
