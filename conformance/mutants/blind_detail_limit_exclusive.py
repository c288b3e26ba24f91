"""Blind mutant (RWQ-RETRY-018): the client refuses a ``detail`` of exactly 8,192 bytes (the bound
taken as exclusive: ``len >= 8192``)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import InvalidArgument
from rwq.protocol.operations import FailResult, Lease


class ExclusiveDetailQueue(WorkQueue):
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
        if isinstance(detail, str) and len(detail.encode("utf-8")) >= 8192:
            raise InvalidArgument("detail must be under 8192 bytes")
        return super().fail(
            lease, reason, dead=dead, delay_ms=delay_ms, fallback_delay_ms=fallback_delay_ms, detail=detail
        )


if __name__ == "__main__":
    serve(ExclusiveDetailQueue)
