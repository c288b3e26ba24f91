"""Mutant: a blocking lease with a negative timeout does not wait (a non-blocking lease) instead of
refusing the timeout."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


class NoWaitQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        if block and timeout_ms < 0:
            return super().lease(lease_ms)
        return super().lease(lease_ms, block=block, timeout_ms=timeout_ms)


if __name__ == "__main__":
    serve(NoWaitQueue)
