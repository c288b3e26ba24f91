"""Blind mutant (RWQ-RETRY-018, RWQ-RETRY-021): the client measures ``detail`` in characters, not
UTF-8 bytes: a detail of 8,192 characters of which some take several bytes passes the client's
check and is sent, and the script refuses it (a refusal after I/O, not before)."""

from __future__ import annotations

from _blind import fail_plan
from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import InvalidArgument
from rwq.protocol.operations import FailResult, Lease, fail_args, lease_arg


class CharsQueue(WorkQueue):
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
        if not isinstance(detail, str) or len(detail) > 8192:
            raise InvalidArgument("detail must be a str of at most 8192 characters")
        return self._run(fail_plan(self.keys, lease, raw_reason, (how, int(ms), detail.encode())))


if __name__ == "__main__":
    serve(CharsQueue)
