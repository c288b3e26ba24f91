"""Mutant: with the legacy option, renew_many passes legacy = 1 with its first call of 1000 only,
so the legacy lease keys of the leases past the first 1000 keep their old TTL."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease


class LegacyFirstChunkQueue(WorkQueue):
    def renew_many(self, leases: Sequence[Lease], lease_ms: int) -> list[bool]:
        for held in leases:  # the whole batch is checked first; only the flag is lost
            v.encode_id(held.id), v.token(held.token)
        head = super().renew_many(leases[:1000], lease_ms)
        if len(leases) <= 1000:
            return head
        legacy, self.legacy_lease_key = self.legacy_lease_key, False
        try:
            return head + super().renew_many(leases[1000:], lease_ms)
        finally:
            self.legacy_lease_key = legacy


if __name__ == "__main__":
    serve(LegacyFirstChunkQueue)
