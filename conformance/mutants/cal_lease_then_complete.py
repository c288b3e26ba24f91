"""Mutant: ``complete_and_lease`` leases first and completes afterwards (two calls in the wrong
order), so an item whose requeued copy waits in the queue is leased again as it is completed."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


class LeaseFirstCompositeQueue(WorkQueue):
    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        leases = self.lease_many(count, lease_ms)
        return self.complete_many(items, require_lease=require_lease), leases


if __name__ == "__main__":
    serve(LeaseFirstCompositeQueue)
