"""Blind mutant (RWQ-RETRY-020, RWQ-RELEASE-004): ``release_many`` of more than 1,000 leases sends
the ``refund`` word in its first chunk's call only; the later chunks are plain releases."""

from __future__ import annotations

from collections.abc import Sequence

from _blind import release_plan
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease, Outcome, lease_arg


class RefundFirstChunkQueue(WorkQueue):
    def release_many(
        self, leases: Sequence[Lease], *, delay_ms: int = 0, refund_attempt: bool = False
    ) -> list[Outcome]:
        held = [lease_arg(one) for one in v.batch(leases, "leases")]
        if not v.flag(refund_attempt, "refund_attempt") or len(held) <= 1000:
            return super().release_many(held, delay_ms=delay_ms, refund_attempt=refund_attempt)
        v.duration_ms(delay_ms, "delay_ms", minimum=0)
        for one in held:
            v.token(one.token)
        first = self._run(release_plan(self.keys, held[:1000], (b"refund", delay_ms)))
        return first + self._run(release_plan(self.keys, held[1000:], (delay_ms,)))


if __name__ == "__main__":
    serve(RefundFirstChunkQueue)
