"""Mutant: the lease time is sent in seconds (``lease_ms // 1000``), a unit bug."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


def _seconds(lease_ms: int) -> int:
    return lease_ms // 1000 or lease_ms


class SecondsQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        return super().lease(_seconds(lease_ms), block=block, timeout_ms=timeout_ms)

    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        return super().lease_many(count, _seconds(lease_ms))


if __name__ == "__main__":
    serve(SecondsQueue)
