"""Blind mutant (RWQ-ERR-002, RWQ-RETRY-021, RWQ-SHARD-003): the sharded queue leaves ``fail``'s
option checks to the shard's client, so a first call with bad options runs the ``shards`` check
(a script call that records the count, a write) before it is refused."""

from __future__ import annotations

from _blind import serve_sharded
from rwq.protocol.operations import FailResult, Lease
from rwq.sharded import ShardedWorkQueue


class LateCheckShardedQueue(ShardedWorkQueue):
    def fail(
        self,
        lease: Lease,
        reason: str = "",
        *,
        dead: bool = False,
        delay_ms: int | None = None,
        fallback_delay_ms: int = 0,
        detail: str = "",
    ) -> FailResult:
        if not self._counted:
            self.record_shard_count()
        return self.queues[self.layout.shard_of(lease.id)].fail(
            lease, reason, dead=dead, delay_ms=delay_ms, fallback_delay_ms=fallback_delay_ms, detail=detail
        )


if __name__ == "__main__":
    serve_sharded(LateCheckShardedQueue)
