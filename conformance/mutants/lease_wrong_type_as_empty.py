"""Mutant: ``lease`` reports a wrong-typed key as "no item", so a worker polls a broken queue
forever instead of telling its operator."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import WrongType
from rwq.protocol.operations import Lease


class BlindLeaseQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        try:
            return super().lease(lease_ms, block=block, timeout_ms=timeout_ms)
        except WrongType:
            return None


if __name__ == "__main__":
    serve(BlindLeaseQueue)
