"""Blind mutant (RWQ-RETRY-018): the port sends ``detail`` only with ``dead`` (it reads "a detail
kept with dead items" as "with fail(dead)"), so an item dead-lettered because its attempts are
used up (a plain fail, or a requested delay) loses the traceback its worker gave."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailResult, Lease


class DetailOnlyDeadQueue(WorkQueue):
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
            delay_ms=delay_ms,
            fallback_delay_ms=fallback_delay_ms,
            detail=detail if dead is True else "",
        )


if __name__ == "__main__":
    serve(DetailOnlyDeadQueue)
