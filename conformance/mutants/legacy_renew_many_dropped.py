"""Mutant: the legacy lease key option reaches the single ``renew`` but not ``renew_many``, so a
G1 cleaner sees the legacy key expire while the lease lives."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.operations import Lease


class LegacySingleRenewQueue(WorkQueue):
    def renew_many(self, leases: Sequence[Lease], lease_ms: int) -> list[bool]:
        return self._run(ops.renew(self.keys, leases, lease_ms))


if __name__ == "__main__":
    serve(LegacySingleRenewQueue)
