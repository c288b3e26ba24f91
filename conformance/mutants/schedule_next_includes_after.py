"""Mutant: the interval walk returns the least slot at or after ``after_ms`` instead of after it:
a scheduler that walks from its watermark offers the slot it already fired (RWQ-SCHED-003)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.periodic import Schedule

_next = Schedule.next_slot


def at_or_after(self: Schedule, after_ms: int) -> int:
    return _next(self, after_ms - 1)


Schedule.next_slot = at_or_after  # type: ignore[method-assign]

if __name__ == "__main__":
    serve(WorkQueue)
