"""Blind mutant (RWQ-RETRY-018): the client cuts a ``detail`` longer than 8,192 bytes to its first
8,192 bytes (possibly inside a character) instead of refusing it with INVALID_ARGUMENT, as a port
that read "a worker cuts a traceback to 8,192 bytes" as the client's rule would."""

from __future__ import annotations

from _blind import fail_plan
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailResult, Lease, fail_args, lease_arg


class TruncatingDetailQueue(WorkQueue):
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
        lease_arg(lease)
        raw_reason, how, ms, _ = fail_args(
            reason, dead=dead, delay_ms=delay_ms, fallback_delay_ms=fallback_delay_ms, detail=""
        )
        raw_detail = detail.encode("utf-8")[:8192] if isinstance(detail, str) else b""
        return self._run(fail_plan(self.keys, lease, raw_reason, (how, int(ms), raw_detail)))


if __name__ == "__main__":
    serve(TruncatingDetailQueue)
