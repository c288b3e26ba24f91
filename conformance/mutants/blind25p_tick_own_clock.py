"""A port whose scheduler computes due slots from its own clock, not the now_ms of the list
reply: RWQ-SCHED-011."""

import time

from _blind25p import patch, serve_reference
from rwq import periodic
from rwq.protocol.periodic import ScheduleList

ORIGINAL = periodic._Core.due


def due(self: periodic._Core, listing: ScheduleList) -> list:  # type: ignore[type-arg]
    return ORIGINAL(self, ScheduleList(int(time.time() * 1000), listing.schedules))


patch(periodic._Core, "due", due)

if __name__ == "__main__":
    serve_reference()
