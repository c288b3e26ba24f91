"""Blind mutant (RWQ-RETRY-021, RWQ-ERR-004): ``release`` takes any truthy ``refund_attempt`` (1,
"yes", "false") as true and any falsy one as false, instead of refusing a non-boolean."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


class TruthyRefundQueue(WorkQueue):
    def release(self, lease: Lease, *, delay_ms: int = 0, refund_attempt: bool = False) -> bool:
        return super().release(lease, delay_ms=delay_ms, refund_attempt=bool(refund_attempt))

    def release_many(
        self, leases: Sequence[Lease], *, delay_ms: int = 0, refund_attempt: bool = False
    ) -> list[Outcome]:
        return super().release_many(leases, delay_ms=delay_ms, refund_attempt=bool(refund_attempt))


if __name__ == "__main__":
    serve(TruthyRefundQueue)
