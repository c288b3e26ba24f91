"""Mutant: under ``missed = once`` a scheduler fires the earliest missed slot rather than the
latest: after a stall the one run is for the oldest slot of the downtime (RWQ-SCHED-010)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.periodic import Schedule

_due = Schedule.due_slots


def earliest(self: Schedule, watermark_ms: int, now_ms: int) -> list[int]:
    slots = _due(self, watermark_ms, now_ms)
    if self.missed == "once" and slots and now_ms - slots[0] > self.grace_ms:
        return [self.next_slot(watermark_ms)]
    return slots


Schedule.due_slots = earliest  # type: ignore[method-assign]

if __name__ == "__main__":
    serve(WorkQueue)
