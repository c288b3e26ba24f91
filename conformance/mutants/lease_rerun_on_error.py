"""Mutant: ``lease`` treats a Redis failure as transient and runs the lease once more: when the
first call's reply was lost, the second leases another item under a second token."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import RedisFailure
from rwq.protocol.operations import Lease


class RerunLeaseQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        try:
            return super().lease(lease_ms, block=block, timeout_ms=timeout_ms)
        except RedisFailure:
            return super().lease(lease_ms, block=block, timeout_ms=timeout_ms)


if __name__ == "__main__":
    serve(RerunLeaseQueue)
