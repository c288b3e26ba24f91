"""Mutant: ``complete_and_lease`` leases the next item without the legacy flag, so the consumer's
fast path writes no legacy lease key."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.operations import Lease, Outcome


class LegacyCompositeQueue(WorkQueue):
    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        plan = ops.complete_and_lease(self.keys, items, lease_ms, count=count, require_lease=require_lease)
        return self._run(plan)


if __name__ == "__main__":
    serve(LegacyCompositeQueue)
