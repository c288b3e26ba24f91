"""Mutant: ``complete_and_lease`` builds the leases of its reply without the attempt number
(reports 0): right for ``lease`` and ``lease_many``, wrong on the composite path."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


class NoAttemptCompositeQueue(WorkQueue):
    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        outcomes, leases = super().complete_and_lease_many(
            items, count, lease_ms, require_lease=require_lease
        )
        return outcomes, [dataclasses.replace(lease, attempt=0) for lease in leases]


if __name__ == "__main__":
    serve(NoAttemptCompositeQueue)
