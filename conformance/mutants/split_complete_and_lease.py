"""Mutant: ``complete_and_lease`` as a ``complete`` call followed by a ``lease`` call: right
results, but another client's command can run in between and the consumer pays two round trips."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


class SplitQueue(WorkQueue):
    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        outcomes = self.complete_many(items, require_lease=require_lease)
        return outcomes, self.lease_many(count, lease_ms)


if __name__ == "__main__":
    serve(SplitQueue)
