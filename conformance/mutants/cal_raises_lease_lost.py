"""Mutant: ``complete_and_lease`` raises ``LEASE_LOST`` when an item's lease was lost, dropping
the leases the same call granted."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import LeaseLost
from rwq.protocol.operations import Lease, Outcome


class RaisingCompositeQueue(WorkQueue):
    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        outcomes, leases = super().complete_and_lease_many(
            items, count, lease_ms, require_lease=require_lease
        )
        if Outcome.LEASE_LOST in outcomes:
            raise LeaseLost("a lease to complete is no longer held by this caller")
        return outcomes, leases


if __name__ == "__main__":
    serve(RaisingCompositeQueue)
