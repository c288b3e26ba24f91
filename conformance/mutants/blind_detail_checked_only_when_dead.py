"""Blind mutant (RWQ-RETRY-021, RWQ-ERR-002): the client checks the size of ``detail`` only with
``dead`` (the one case where it knows the item dies); a too-long detail on a plain fail or a
requested delay is sent, and refused by the script, after I/O."""

from __future__ import annotations

from _blind import fail_plan
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailResult, Lease, fail_args, lease_arg


class DeadOnlyDetailCheckQueue(WorkQueue):
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
        if dead is True or not isinstance(detail, str):
            options = {"dead": dead, "delay_ms": delay_ms, "fallback_delay_ms": fallback_delay_ms}
            return super().fail(lease, reason, **options, detail=detail)  # type: ignore[arg-type]
        lease_arg(lease)
        raw_reason, how, ms, _ = fail_args(
            reason, dead=dead, delay_ms=delay_ms, fallback_delay_ms=fallback_delay_ms, detail=""
        )
        return self._run(fail_plan(self.keys, lease, raw_reason, (how, int(ms), detail.encode())))


if __name__ == "__main__":
    serve(DeadOnlyDetailCheckQueue)
