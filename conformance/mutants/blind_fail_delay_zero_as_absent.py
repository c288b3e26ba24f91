"""Blind mutant (RWQ-RETRY-017): ``fail`` treats a requested delay of 0 as no delay asked, as a port
whose options struct uses the zero value for "absent" would (Go's ``DelayMs int``): ``delay_ms=0``
sends ``how`` = ``backoff``, so the policy's backoff applies instead of an immediate retry, and
``dead`` with ``delay_ms=0`` is accepted."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailResult, Lease


class ZeroDelayQueue(WorkQueue):
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
            dead=dead,
            delay_ms=delay_ms or None,
            fallback_delay_ms=fallback_delay_ms,
            detail=detail,
        )


if __name__ == "__main__":
    serve(ZeroDelayQueue)
