"""Blind mutant (RWQ-RETRY-020): ``release`` drops ``refund`` when it also has a delay (the port has
two ARGV layouts and wrote the word into the no-delay one only)."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


class RefundNoDelayQueue(WorkQueue):
    def release(self, lease: Lease, *, delay_ms: int = 0, refund_attempt: bool = False) -> bool:
        refund = refund_attempt and not (isinstance(delay_ms, int) and delay_ms > 0)
        return super().release(lease, delay_ms=delay_ms, refund_attempt=refund)

    def release_many(
        self, leases: Sequence[Lease], *, delay_ms: int = 0, refund_attempt: bool = False
    ) -> list[Outcome]:
        refund = refund_attempt and not (isinstance(delay_ms, int) and delay_ms > 0)
        return super().release_many(leases, delay_ms=delay_ms, refund_attempt=refund)


if __name__ == "__main__":
    serve(RefundNoDelayQueue)
