"""Blind mutant (RWQ-RETRY-021): ``fail`` takes any truthy ``dead`` (1, "no") as true instead of
refusing a non-boolean before any I/O."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailResult, Lease


class TruthyDeadQueue(WorkQueue):
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
        return super().fail(
            lease,
            reason,
            dead=bool(dead),
            delay_ms=delay_ms,
            fallback_delay_ms=fallback_delay_ms,
            detail=detail,
        )


if __name__ == "__main__":
    serve(TruthyDeadQueue)
