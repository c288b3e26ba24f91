"""Mutant: a lease time of 0 or less means "the default" (30 s) instead of INVALID_ARGUMENT."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease

DEFAULT_LEASE_MS = 30_000


class DefaultLeaseQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        return super().lease(
            lease_ms if lease_ms > 0 else DEFAULT_LEASE_MS, block=block, timeout_ms=timeout_ms
        )


if __name__ == "__main__":
    serve(DefaultLeaseQueue)
