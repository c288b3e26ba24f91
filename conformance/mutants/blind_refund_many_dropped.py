"""Blind mutant (RWQ-RETRY-020): ``release_many`` ignores ``refund_attempt`` (only the single
``release`` got the new option)."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease, Outcome


class RefundSingleOnlyQueue(WorkQueue):
    def release_many(
        self, leases: Sequence[Lease], *, delay_ms: int = 0, refund_attempt: bool = False
    ) -> list[Outcome]:
        v.flag(refund_attempt, "refund_attempt")
        return super().release_many(leases, delay_ms=delay_ms)


if __name__ == "__main__":
    serve(RefundSingleOnlyQueue)
