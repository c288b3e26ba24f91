"""A port whose scheduler offers only slots less than grace_ms late, leaving out a slot exactly
grace_ms late that fire would still take: RWQ-SCHED-010."""

from _blind25p import patch, serve_reference
from rwq.protocol.periodic import MAX_SLOTS, Schedule


def due_slots(self: Schedule, watermark_ms: int, now_ms: int) -> list[int]:
    slots: list[int] = []
    slot = self.next_slot(max(watermark_ms, now_ms - self.grace_ms))
    while slot <= now_ms and len(slots) < MAX_SLOTS:
        slots.append(slot)
        slot = self.next_slot(slot)
    if not slots and self.missed == "once":
        late = self.latest_slot(watermark_ms, now_ms)
        slots = [late] if late is not None else []
    return slots


patch(Schedule, "due_slots", due_slots)
if __name__ == "__main__":
    serve_reference()
