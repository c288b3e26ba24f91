"""Mutant: a blocking lease with ``timeout_ms = 0`` does not wait at all (0 read as "no waiting"
rather than "no limit")."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


class ZeroIsNoWaitQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        if block and timeout_ms == 0:
            return super().lease(lease_ms)
        return super().lease(lease_ms, block=block, timeout_ms=timeout_ms)


if __name__ == "__main__":
    serve(ZeroIsNoWaitQueue)
