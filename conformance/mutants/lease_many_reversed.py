"""Mutant: ``lease_many`` returns its items newest first (the reply's entries prepended one by one
to the result list)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


class ReversedBatchQueue(WorkQueue):
    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        leases: list[Lease] = []
        for lease in super().lease_many(count, lease_ms):
            leases.insert(0, lease)
        return leases


if __name__ == "__main__":
    serve(ReversedBatchQueue)
