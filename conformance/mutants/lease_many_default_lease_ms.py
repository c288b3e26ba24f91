"""Mutant: ``lease_many`` drops its ``lease_ms`` argument and leases for the library's default of
30 seconds."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease


class DefaultLeaseQueue(WorkQueue):
    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        v.duration_ms(lease_ms, "lease_ms")
        return super().lease_many(count, 30_000)


if __name__ == "__main__":
    serve(DefaultLeaseQueue)
