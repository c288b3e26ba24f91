"""A port whose scheduler, under missed = once with no slot on time, offers the oldest missed slot
after the watermark, not the latest: RWQ-SCHED-010."""

from _blind25p import patch, serve_reference
from rwq.protocol.periodic import MAX_SLOTS, Schedule


def due_slots(self: Schedule, watermark_ms: int, now_ms: int) -> list[int]:
    slots: list[int] = []
    slot = self.next_slot(max(watermark_ms, now_ms - self.grace_ms - 1))
    while slot <= now_ms and len(slots) < MAX_SLOTS:
        slots.append(slot)
        slot = self.next_slot(slot)
    if not slots and self.missed == "once":
        oldest = self.next_slot(max(watermark_ms, 0))
        slots = [oldest] if oldest <= now_ms else []
    return slots


patch(Schedule, "due_slots", due_slots)
if __name__ == "__main__":
    serve_reference()
