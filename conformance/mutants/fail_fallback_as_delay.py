"""Mutant: ``fail`` sends the fallback delay as a requested delay, so it replaces the queue's
policy instead of applying only where there is none."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailResult, Lease


class FallbackAlwaysQueue(WorkQueue):
    def fail(
        self,
        lease: Lease,
        reason: str = "",
        *,
        delay_ms: int | None = None,
        fallback_delay_ms: int = 0,
        **options: Any,
    ) -> FailResult:
        if delay_ms is None and fallback_delay_ms and not options.get("dead"):
            delay_ms = fallback_delay_ms
        return super().fail(lease, reason, delay_ms=delay_ms, **options)


if __name__ == "__main__":
    serve(FallbackAlwaysQueue)
