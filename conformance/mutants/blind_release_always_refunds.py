"""Blind mutant (RWQ-RETRY-020): ``release`` always sends the ``refund`` word (the port reasons that
an item given back was not really attempted), so a plain release changes the attempt count."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease, Outcome


class AlwaysRefundQueue(WorkQueue):
    def release(self, lease: Lease, *, delay_ms: int = 0, refund_attempt: bool = False) -> bool:
        v.flag(refund_attempt, "refund_attempt")
        return super().release(lease, delay_ms=delay_ms, refund_attempt=True)

    def release_many(
        self, leases: Sequence[Lease], *, delay_ms: int = 0, refund_attempt: bool = False
    ) -> list[Outcome]:
        v.flag(refund_attempt, "refund_attempt")
        return super().release_many(leases, delay_ms=delay_ms, refund_attempt=True)


if __name__ == "__main__":
    serve(AlwaysRefundQueue)
