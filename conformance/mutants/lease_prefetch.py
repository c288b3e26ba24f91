"""Mutant: a lease prefetches: it leases ten items and keeps the rest in a per-process buffer for
the next calls, which then hand out items that were completed (or taken over) meanwhile."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


class PrefetchingQueue(WorkQueue):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.buffer: list[Lease] = []

    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        if block:
            return super().lease(lease_ms, block=block, timeout_ms=timeout_ms)
        if not self.buffer:
            self.buffer.extend(self.lease_many(10, lease_ms))
        return self.buffer.pop(0) if self.buffer else None


if __name__ == "__main__":
    serve(PrefetchingQueue)
