"""Mutant: ``release`` and ``release_many`` ignore ``refund_attempt``, so every release at shutdown
uses up an attempt and rolling restarts dead-letter items that never failed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


class NoRefundQueue(WorkQueue):
    def release(self, lease: Lease, *, delay_ms: int = 0, **options: Any) -> bool:
        return super().release(lease, delay_ms=delay_ms)

    def release_many(self, leases: Sequence[Lease], *, delay_ms: int = 0, **options: Any) -> list[Outcome]:
        return super().release_many(leases, delay_ms=delay_ms)


if __name__ == "__main__":
    serve(NoRefundQueue)
