"""Blind mutant (RWQ-RETRY-017, RWQ-RETRY-021): the client refuses a requested or fallback delay of
exactly 31,536,000,000 ms (the bound taken as exclusive)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import InvalidArgument
from rwq.protocol.operations import FailResult, Lease

MAX = 31_536_000_000


class ExclusiveMaxQueue(WorkQueue):
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
        if MAX in (delay_ms, fallback_delay_ms):
            raise InvalidArgument(f"delay_ms must be below {MAX}")
        return super().fail(
            lease, reason, dead=dead, delay_ms=delay_ms, fallback_delay_ms=fallback_delay_ms, detail=detail
        )


if __name__ == "__main__":
    serve(ExclusiveMaxQueue)
