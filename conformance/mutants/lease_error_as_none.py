"""Mutant: ``lease`` reports a failed connection as "no item", so a caller polls on while the
lease its lost call may have granted is left to expire."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import RedisFailure
from rwq.protocol.operations import Lease


class QuietLeaseQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        if block:
            return super().lease(lease_ms, block=block, timeout_ms=timeout_ms)
        try:
            return super().lease(lease_ms)
        except RedisFailure:
            return None


if __name__ == "__main__":
    serve(QuietLeaseQueue)
