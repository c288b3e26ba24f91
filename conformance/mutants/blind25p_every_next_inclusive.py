"""A port whose every_ms next slot is the least grid instant not before after_ms (a ceiling), so a
slot at after_ms itself comes back: RWQ-SCHED-003."""

from _blind25p import patch, serve_reference
from rwq.protocol.periodic import Schedule

ORIGINAL = Schedule.next_slot


def next_slot(self: Schedule, after_ms: int) -> int:
    if self.every_ms is not None:
        return -((self.offset_ms - after_ms) // self.every_ms) * self.every_ms + self.offset_ms
    return ORIGINAL(self, after_ms)


patch(Schedule, "next_slot", next_slot)

if __name__ == "__main__":
    serve_reference()
