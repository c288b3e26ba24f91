"""Mutant: after a lease finds the queue empty, the client remembers it and answers the next
non-blocking leases "no item" without asking Redis (a per-process cache of the queue's state)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


class EmptyCacheQueue(WorkQueue):
    empty = False

    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        if self.empty and not block:
            return None
        leased = super().lease(lease_ms, block=block, timeout_ms=timeout_ms)
        self.empty = leased is None
        return leased


if __name__ == "__main__":
    serve(EmptyCacheQueue)
