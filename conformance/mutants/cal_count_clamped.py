"""Mutant: ``complete_and_lease`` clamps an out-of-range ``count`` to 1..1000 instead of refusing
the call, so an invalid call completes items."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease, Outcome


class ClampingCompositeQueue(WorkQueue):
    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        clamped = max(1, min(count, v.MAX_BATCH))
        return super().complete_and_lease_many(items, clamped, lease_ms, require_lease=require_lease)


if __name__ == "__main__":
    serve(ClampingCompositeQueue)
