"""Mutant: ``renew_many`` splits its leases into calls of 1000 and validates each chunk just
before sending it, so a bad lease past the first 1000 is found after the first 1000 were renewed
(RWQ-ERR-004). The Node port of issue #24 shipped this."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease


class ChunkCheckedQueue(WorkQueue):
    def renew_many(self, leases: Sequence[Lease], lease_ms: int) -> list[bool]:
        batch = list(leases)
        renewed: list[bool] = []
        for start in range(0, len(batch), v.MAX_BATCH):
            renewed += super().renew_many(batch[start : start + v.MAX_BATCH], lease_ms)
        return renewed


if __name__ == "__main__":
    serve(ChunkCheckedQueue)
