"""Mutant: ``complete_and_lease_many`` parses the lease part of the composite reply with code of
its own that prepends each entry, so the items it leases come newest first; ``lease_many`` is
right."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


class ReversedCompositeQueue(WorkQueue):
    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        settled, leases = super().complete_and_lease_many(items, count, lease_ms, require_lease=require_lease)
        return settled, leases[::-1]


if __name__ == "__main__":
    serve(ReversedCompositeQueue)
