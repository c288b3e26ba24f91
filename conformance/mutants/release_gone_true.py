"""Mutant: ``release`` reports true whenever the lease was not lost, also when the item was gone."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import LeaseLost
from rwq.protocol.operations import Lease, Outcome


class GoneIsReleasedQueue(WorkQueue):
    def release(self, lease: Lease, *, delay_ms: int = 0, **options: Any) -> bool:
        (outcome,) = self.release_many([lease], delay_ms=delay_ms)
        if outcome is Outcome.LEASE_LOST:
            raise LeaseLost(f"the lease on {lease.id!r} is no longer held by this caller")
        return True


if __name__ == "__main__":
    serve(GoneIsReleasedQueue)
