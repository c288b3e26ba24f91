"""Mutant: ``complete_and_lease`` drops ``require_lease`` (``complete`` keeps it), so the composite
completes items whose leases the caller lost."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


class AnyModeCompositeQueue(WorkQueue):
    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        return super().complete_and_lease_many(items, count, lease_ms)


if __name__ == "__main__":
    serve(AnyModeCompositeQueue)
