"""Mutant: ``complete_and_lease_many`` is built on the single-item composite: it settles only the
first item and reports its outcome alone."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


class FirstItemCompositeQueue(WorkQueue):
    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        return super().complete_and_lease_many(items[:1], count, lease_ms, require_lease=require_lease)


if __name__ == "__main__":
    serve(FirstItemCompositeQueue)
