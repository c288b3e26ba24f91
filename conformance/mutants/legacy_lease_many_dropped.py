"""Mutant: the legacy lease key option reaches the single ``lease`` but not ``lease_many``."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.operations import Lease


class LegacySingleLeaseQueue(WorkQueue):
    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        return self._run(ops.lease(self.keys, lease_ms, count=count))


if __name__ == "__main__":
    serve(LegacySingleLeaseQueue)
