"""Blind mutant (RWQ-RETRY-021): ``fail`` takes a boolean ``delay_ms`` or ``fallback_delay_ms`` as
the integer it is in Python (``True`` is 1 ms) instead of refusing it before any I/O."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailResult, Lease


class BoolDelayQueue(WorkQueue):
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
        if isinstance(delay_ms, bool):
            delay_ms = int(delay_ms)
        if isinstance(fallback_delay_ms, bool):
            fallback_delay_ms = int(fallback_delay_ms)
        return super().fail(
            lease, reason, dead=dead, delay_ms=delay_ms, fallback_delay_ms=fallback_delay_ms, detail=detail
        )


if __name__ == "__main__":
    serve(BoolDelayQueue)
