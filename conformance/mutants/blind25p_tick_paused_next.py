"""A port whose scheduler counts paused schedules when it says when the next slot is (it only skips
firing them): RWQ-SCHED-011."""

from _blind25p import patch, serve_reference
from rwq import periodic
from rwq.protocol.periodic import ScheduleList

ORIGINAL = periodic._Core.due


def due(self: periodic._Core, listing: ScheduleList) -> list:  # type: ignore[type-arg]
    out = ORIGINAL(self, listing)
    for stored in listing.schedules:
        if stored.paused_ms is not None:
            schedule = self.parsed(stored)
            if schedule is not None:
                out.append((stored, schedule, []))
    return out


patch(periodic._Core, "due", due)

if __name__ == "__main__":
    serve_reference()
