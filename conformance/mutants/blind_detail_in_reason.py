"""Blind mutant (RWQ-RETRY-018): the port keeps the detail by appending it to the reason (``reason:
detail``, cut to the reason's 1,024 bytes at a character boundary) and sends an empty detail, so
a dead item's info has no ``detail`` field and its reason changes."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailResult, Lease


class DetailInReasonQueue(WorkQueue):
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
        if isinstance(detail, str) and isinstance(reason, str) and detail:
            reason = f"{reason}: {detail}".encode()[:1024].decode("utf-8", "ignore")
            detail = ""
        return super().fail(
            lease, reason, dead=dead, delay_ms=delay_ms, fallback_delay_ms=fallback_delay_ms, detail=detail
        )


if __name__ == "__main__":
    serve(DetailInReasonQueue)
