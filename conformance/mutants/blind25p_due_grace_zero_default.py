"""A port whose scheduler reads grace_ms with a falsy default (grace_ms or 60000), so grace 0 acts
as 60 s when it chooses the slots to offer: RWQ-SCHED-010."""

import dataclasses

from _blind25p import patch, serve_reference
from rwq.protocol.periodic import GRACE_MS, Schedule

ORIGINAL = Schedule.due_slots


def due_slots(self: Schedule, watermark_ms: int, now_ms: int) -> list[int]:
    return ORIGINAL(dataclasses.replace(self, grace_ms=self.grace_ms or GRACE_MS), watermark_ms, now_ms)


patch(Schedule, "due_slots", due_slots)

if __name__ == "__main__":
    serve_reference()
