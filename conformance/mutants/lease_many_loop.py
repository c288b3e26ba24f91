"""Mutant: ``lease_many`` calls the single lease ``count`` times: one round trip and one token per
item, and other clients' leases interleave with the batch."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease


class LoopingBatchQueue(WorkQueue):
    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        v.batch_size(count, "count")
        leases: list[Lease] = []
        while len(leases) < count and (lease := self.lease(lease_ms)) is not None:
            leases.append(lease)
        return leases


if __name__ == "__main__":
    serve(LoopingBatchQueue)
