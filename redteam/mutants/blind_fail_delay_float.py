"""Blind mutant (RWQ-RETRY-021): ``fail`` truncates a non-integer ``delay_ms`` or
``fallback_delay_ms`` (1.5 becomes 1) instead of refusing it, as a port reading JSON numbers into
an integer field would."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailResult, Lease


class FloatDelayQueue(WorkQueue):
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
        if isinstance(delay_ms, float):
            delay_ms = int(delay_ms)
        if isinstance(fallback_delay_ms, float):
            fallback_delay_ms = int(fallback_delay_ms)
        return super().fail(
            lease, reason, dead=dead, delay_ms=delay_ms, fallback_delay_ms=fallback_delay_ms, detail=detail
        )


if __name__ == "__main__":
    serve(FloatDelayQueue)
