"""Mutant: ``complete_and_lease_many`` of more than 1000 items completes the first ones with
``complete_many`` and the last 1000 with one ``complete_and_lease`` call, instead of refusing."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease, Outcome


class SplittingCompositeQueue(WorkQueue):
    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        if len(items) <= v.MAX_BATCH:
            return super().complete_and_lease_many(items, count, lease_ms, require_lease=require_lease)
        head = self.complete_many(items[: -v.MAX_BATCH], require_lease=require_lease)
        tail, leases = super().complete_and_lease_many(
            items[-v.MAX_BATCH :], count, lease_ms, require_lease=require_lease
        )
        return head + tail, leases


if __name__ == "__main__":
    serve(SplittingCompositeQueue)
