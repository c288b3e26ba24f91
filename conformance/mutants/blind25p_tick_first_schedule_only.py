"""A port whose scheduler fires one schedule's due slots per tick (the first by name) and leaves the
others to the next tick: RWQ-SCHED-010."""

from _blind25p import patch, serve_reference
from rwq import periodic
from rwq.protocol.periodic import ScheduleList

ORIGINAL = periodic._Core.due


def due(self: periodic._Core, listing: ScheduleList) -> list:  # type: ignore[type-arg]
    out, seen = [], False
    for stored, schedule, slots in ORIGINAL(self, listing):
        out.append((stored, schedule, [] if seen else slots))
        seen = seen or bool(slots)
    return out


patch(periodic._Core, "due", due)

if __name__ == "__main__":
    serve_reference()
