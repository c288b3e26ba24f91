"""Mutant: a scheduler offers only the newest due slot of each schedule: after a stall of a few
slots it fires the last one and the older on-time ones are lost (RWQ-SCHED-010)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.periodic import Schedule

_due = Schedule.due_slots


def newest(self: Schedule, watermark_ms: int, now_ms: int) -> list[int]:
    return _due(self, watermark_ms, now_ms)[-1:]


Schedule.due_slots = newest  # type: ignore[method-assign]

if __name__ == "__main__":
    serve(WorkQueue)
