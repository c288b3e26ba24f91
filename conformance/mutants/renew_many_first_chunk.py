"""Mutant: ``renew_many`` renews only the first chunk of 1000 leases and drops the rest."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease


class FirstChunkRenewQueue(WorkQueue):
    def renew_many(self, leases: Sequence[Lease], lease_ms: int) -> list[bool]:
        return super().renew_many(leases[: v.MAX_BATCH], lease_ms)


if __name__ == "__main__":
    serve(FirstChunkRenewQueue)
