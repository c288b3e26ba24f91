"""Mutant: ``complete_and_lease`` ignores its ``lease_ms`` and leases the next item for a default
30 s."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome

DEFAULT_LEASE_MS = 30_000


class DefaultLeaseCompositeQueue(WorkQueue):
    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        return super().complete_and_lease_many(items, count, DEFAULT_LEASE_MS, require_lease=require_lease)


if __name__ == "__main__":
    serve(DefaultLeaseCompositeQueue)
