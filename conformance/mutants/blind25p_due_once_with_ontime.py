"""A port whose scheduler, under missed = once, offers the latest missed slot before the on-time
ones even when some are on time, so one late run fires too: RWQ-SCHED-010."""

from _blind25p import patch, serve_reference
from rwq.protocol.periodic import Schedule

ORIGINAL = Schedule.due_slots


def due_slots(self: Schedule, watermark_ms: int, now_ms: int) -> list[int]:
    slots = ORIGINAL(self, watermark_ms, now_ms)
    if self.missed == "once" and slots and now_ms - slots[0] <= self.grace_ms:
        late = self.latest_slot(watermark_ms, now_ms - self.grace_ms - 1)
        if late is not None and late < slots[0]:
            return [late, *slots[:99]]
    return slots


patch(Schedule, "due_slots", due_slots)

if __name__ == "__main__":
    serve_reference()
