"""A port whose every_ms slot walk ignores offset_ms, computing the grid k*every_ms (the definition
stores it; fire then refuses the slots): RWQ-SCHED-003."""

from _blind25p import patch, serve_reference
from rwq.protocol.periodic import Schedule

ORIGINAL = Schedule.next_slot


def next_slot(self: Schedule, after_ms: int) -> int:
    if self.every_ms is not None:
        return (after_ms // self.every_ms + 1) * self.every_ms
    return ORIGINAL(self, after_ms)


patch(Schedule, "next_slot", next_slot)

if __name__ == "__main__":
    serve_reference()
