"""Mutant: the blocking timeout is converted to seconds (``timeout_ms // 1000``, BLMOVE's unit)
and then used as milliseconds, so a blocking lease gives up a thousand times too early."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


class SecondsTimeoutQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        if block and timeout_ms > 0:
            timeout_ms = max(timeout_ms // 1000, 1)
        return super().lease(lease_ms, block=block, timeout_ms=timeout_ms)


if __name__ == "__main__":
    serve(SecondsTimeoutQueue)
