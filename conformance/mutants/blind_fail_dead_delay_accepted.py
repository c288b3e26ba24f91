"""Blind mutant (RWQ-RETRY-021): ``fail`` with ``dead`` and a requested delay is not refused: the
port sends ``how`` = ``dead`` and drops the delay silently, instead of raising INVALID_ARGUMENT
before any I/O."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailResult, Lease


class DeadDelayQueue(WorkQueue):
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
        if dead is True:
            delay_ms = None
        return super().fail(
            lease, reason, dead=dead, delay_ms=delay_ms, fallback_delay_ms=fallback_delay_ms, detail=detail
        )


if __name__ == "__main__":
    serve(DeadDelayQueue)
