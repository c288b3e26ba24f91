"""Mutant: ``complete_and_lease`` treats a Redis failure as transient and runs the composite once
more: when the first call's reply was lost, the second reports the item gone and leases another."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import RedisFailure
from rwq.protocol.operations import Lease, Outcome


class RerunCompositeQueue(WorkQueue):
    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        try:
            return super().complete_and_lease_many(items, count, lease_ms, require_lease=require_lease)
        except RedisFailure:
            return super().complete_and_lease_many(items, count, lease_ms, require_lease=require_lease)


if __name__ == "__main__":
    serve(RerunCompositeQueue)
