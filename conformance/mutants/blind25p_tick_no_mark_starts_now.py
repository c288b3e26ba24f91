"""A port whose scheduler reads a schedule with no watermark as fired up to now (so nothing of the
past fires), where the reference offers the slots still within grace: RWQ-SCHED-010."""

import dataclasses

from _blind25p import patch, serve_reference
from rwq import periodic
from rwq.protocol.periodic import ScheduleList

ORIGINAL = periodic._Core.due


def due(self: periodic._Core, listing: ScheduleList) -> list:  # type: ignore[type-arg]
    schedules = [
        s if s.last_fired_ms is not None else dataclasses.replace(s, last_fired_ms=listing.now_ms)
        for s in listing.schedules
    ]
    return ORIGINAL(self, ScheduleList(listing.now_ms, schedules))


patch(periodic._Core, "due", due)

if __name__ == "__main__":
    serve_reference()
