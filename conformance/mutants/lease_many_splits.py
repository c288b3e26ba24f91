"""Mutant: ``lease_many`` applies the batch rule of add and complete to its count and splits a
count above 1000 into several lease calls, each under its own token."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


class SplittingQueue(WorkQueue):
    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        leases: list[Lease] = []
        while count > 1000:
            leases += super().lease_many(1000, lease_ms)
            count -= 1000
        return leases + super().lease_many(count, lease_ms)


if __name__ == "__main__":
    serve(SplittingQueue)
