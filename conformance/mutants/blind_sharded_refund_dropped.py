"""Blind mutant (RWQ-SHARD-002, RWQ-RETRY-020): the sharded queue's ``release`` and ``release_many``
validate ``refund_attempt`` and then release on the shard without it."""

from __future__ import annotations

from collections.abc import Sequence

from _blind import serve_sharded
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease, Outcome
from rwq.sharded import ShardedWorkQueue


class NoRefundShardedQueue(ShardedWorkQueue):
    def release(self, lease: Lease, *, delay_ms: int = 0, refund_attempt: bool = False) -> bool:
        v.flag(refund_attempt, "refund_attempt")
        return super().release(lease, delay_ms=delay_ms)

    def release_many(
        self, leases: Sequence[Lease], *, delay_ms: int = 0, refund_attempt: bool = False
    ) -> list[Outcome]:
        v.flag(refund_attempt, "refund_attempt")
        return super().release_many(leases, delay_ms=delay_ms)


if __name__ == "__main__":
    serve_sharded(NoRefundShardedQueue)
