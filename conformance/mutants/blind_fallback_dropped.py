"""Blind mutant (RWQ-RETRY-019): ``fail`` never sends the fallback delay (the port added the
parameter but builds ARGV with 0), so on a queue without a policy a failed item is ready again
at once: a worker's failing handler hot-loops (RWQ-WORKER-002)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import FailResult, Lease


class NoFallbackQueue(WorkQueue):
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
        v.duration_ms(fallback_delay_ms, "fallback_delay_ms", minimum=0)
        return super().fail(lease, reason, dead=dead, delay_ms=delay_ms, detail=detail)


if __name__ == "__main__":
    serve(NoFallbackQueue)
