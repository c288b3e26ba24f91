"""Blind mutant (RWQ-RETRY-021, RWQ-ERR-004): the client validates ``fallback_delay_ms`` only when it
would send it (no ``dead``, no requested delay); otherwise a bad fallback (negative, a bool, too
large) is ignored instead of refused."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailResult, Lease


class LazyFallbackQueue(WorkQueue):
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
        if dead is True or delay_ms is not None:
            fallback_delay_ms = 0
        return super().fail(
            lease, reason, dead=dead, delay_ms=delay_ms, fallback_delay_ms=fallback_delay_ms, detail=detail
        )


if __name__ == "__main__":
    serve(LazyFallbackQueue)
