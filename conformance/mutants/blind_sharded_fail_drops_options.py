"""Blind mutant (RWQ-SHARD-002, RWQ-RETRY-016..019): the sharded queue's ``fail`` routes the item to
its shard but passes only the reason: ``dead``, the requested and fallback delays and the detail
are validated and then dropped (the options were added to the plain client only)."""

from __future__ import annotations

from _blind import serve_sharded
from rwq.protocol.operations import FailResult, Lease, fail_args
from rwq.sharded import ShardedWorkQueue


class DropOptionsShardedQueue(ShardedWorkQueue):
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
        fail_args(reason, dead=dead, delay_ms=delay_ms, fallback_delay_ms=fallback_delay_ms, detail=detail)
        return super().fail(lease, reason)


if __name__ == "__main__":
    serve_sharded(DropOptionsShardedQueue)
