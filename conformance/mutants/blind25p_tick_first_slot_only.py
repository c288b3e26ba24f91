"""A port whose scheduler offers one slot per schedule per tick, the oldest due: RWQ-SCHED-010."""

from _blind25p import patch, serve_reference
from rwq import periodic
from rwq.protocol.periodic import ScheduleList

ORIGINAL = periodic._Core.due


def due(self: periodic._Core, listing: ScheduleList) -> list:  # type: ignore[type-arg]
    return [(stored, schedule, slots[:1]) for stored, schedule, slots in ORIGINAL(self, listing)]


patch(periodic._Core, "due", due)

if __name__ == "__main__":
    serve_reference()
