"""Mutant: a blocking lease whose connection fails (a Redis restart) returns "no item" at once,
as if its timeout had passed."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import RedisFailure
from rwq.protocol.operations import Lease


class QuietBlockingQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        try:
            return super().lease(lease_ms, block=block, timeout_ms=timeout_ms)
        except RedisFailure:
            if block:
                return None
            raise


if __name__ == "__main__":
    serve(QuietBlockingQueue)
