"""Mutant: the blocking lease path builds its lease without the attempt number (reports 0): right
for ``lease_many`` and the non-blocking ``lease``, wrong for a lease that waited and claimed."""

from __future__ import annotations

import dataclasses

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


class NoAttemptBlockingQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        leased = super().lease(lease_ms, block=block, timeout_ms=timeout_ms)
        return dataclasses.replace(leased, attempt=0) if block and leased is not None else leased


if __name__ == "__main__":
    serve(NoAttemptBlockingQueue)
