"""Mutant: complete_many with require_lease sends its first call of 1000 in owner mode and the
calls after it in any mode (the mode is set up once, for the first chunk), so an item past the
first 1000 is completed although the caller does not hold its lease."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


class FirstChunkOwnerQueue(WorkQueue):
    def complete_many(self, items: Sequence[Lease | str], *, require_lease: bool = False) -> list[Outcome]:
        if not require_lease or len(items) <= 1000:
            return super().complete_many(items, require_lease=require_lease)
        head = super().complete_many(items[:1000], require_lease=True)
        return head + super().complete_many(items[1000:])


if __name__ == "__main__":
    serve(FirstChunkOwnerQueue)
