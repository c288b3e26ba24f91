"""A port whose scheduler offers every due slot in one fire call (up to 1,000), past the 100 the
script takes, so a long stall under a wide grace fails every tick: RWQ-SCHED-010."""

from _blind25p import patch, serve_reference
from rwq.protocol.periodic import Schedule


def due_slots(self: Schedule, watermark_ms: int, now_ms: int) -> list[int]:
    slots: list[int] = []
    slot = self.next_slot(max(watermark_ms, now_ms - self.grace_ms - 1))
    while slot <= now_ms and len(slots) < 1000:
        slots.append(slot)
        slot = self.next_slot(slot)
    if not slots and self.missed == "once":
        late = self.latest_slot(watermark_ms, now_ms)
        slots = [late] if late is not None else []
    return slots


patch(Schedule, "due_slots", due_slots)
if __name__ == "__main__":
    serve_reference()
