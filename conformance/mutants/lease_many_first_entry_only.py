"""Mutant: ``lease_many`` parses the lease reply as a single lease and returns its first entry
only; the other items stay leased to nobody until their leases expire."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


class FirstEntryQueue(WorkQueue):
    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        return super().lease_many(count, lease_ms)[:1]


if __name__ == "__main__":
    serve(FirstEntryQueue)
