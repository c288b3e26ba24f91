"""Blind mutant (RWQ-RETRY-017): ``fail`` with a requested delay is sent as ``release`` with that
delay (the port reads "retry after exactly that delay" as a delayed release), so the attempt
limit no longer holds: an item whose attempts are used up is retried instead of dead-lettered,
and the reason is lost."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailOutcome, FailResult, Lease, fail_args


class DelayAsReleaseQueue(WorkQueue):
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
        if delay_ms is None or dead is not False:
            options = {"dead": dead, "delay_ms": delay_ms, "fallback_delay_ms": fallback_delay_ms}
            return super().fail(lease, reason, **options, detail=detail)  # type: ignore[arg-type]
        fail_args(reason, delay_ms=delay_ms, fallback_delay_ms=fallback_delay_ms, detail=detail)
        released = self.release(lease, delay_ms=delay_ms)
        return FailResult(FailOutcome.RETRY if released else FailOutcome.GONE, delay_ms)


if __name__ == "__main__":
    serve(DelayAsReleaseQueue)
