"""A port whose scheduler, under missed = once, offers every missed slot after the watermark (up to
100), so each fires: RWQ-SCHED-010."""

from _blind25p import patch, serve_reference
from rwq.protocol.periodic import Schedule

ORIGINAL = Schedule.due_slots


def due_slots(self: Schedule, watermark_ms: int, now_ms: int) -> list[int]:
    if self.missed != "once":
        return ORIGINAL(self, watermark_ms, now_ms)
    slots: list[int] = []
    slot = self.next_slot(max(watermark_ms, 0))
    while slot <= now_ms and len(slots) < 100:
        slots.append(slot)
        slot = self.next_slot(slot)
    return slots


patch(Schedule, "due_slots", due_slots)

if __name__ == "__main__":
    serve_reference()
