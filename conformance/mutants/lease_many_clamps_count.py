"""Mutant: ``lease_many`` clamps a count above 1000 to 1000 instead of rejecting it, so a caller
asking for 1500 items silently gets at most 1000."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


class ClampingQueue(WorkQueue):
    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        return super().lease_many(min(count, 1000), lease_ms)


if __name__ == "__main__":
    serve(ClampingQueue)
