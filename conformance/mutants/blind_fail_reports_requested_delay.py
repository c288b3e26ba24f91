"""Blind mutant (RWQ-RETRY-019): ``fail`` reports the fallback delay it passed as the retry's delay,
not the delay the script chose: on a queue with a policy (where the fallback is ignored) the
reported delay is wrong."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailOutcome, FailResult, Lease


class RequestedDelayQueue(WorkQueue):
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
        result = super().fail(
            lease, reason, dead=dead, delay_ms=delay_ms, fallback_delay_ms=fallback_delay_ms, detail=detail
        )
        if result.outcome is FailOutcome.RETRY and delay_ms is None and fallback_delay_ms:
            return FailResult(result.outcome, fallback_delay_ms)
        return result


if __name__ == "__main__":
    serve(RequestedDelayQueue)
