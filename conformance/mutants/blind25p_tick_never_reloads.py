"""A port whose scheduler loads the definitions on its first tick and reloads them only after a
gone or stale reply (never on a timer), so a schedule put later is never fired: RWQ-SCHED-012."""

from _blind25p import patch, serve_reference
from rwq import periodic
from rwq.protocol.periodic import ScheduleList, StoredSchedule

ORIGINAL = periodic._Core.due
LOADED: dict[int, list[StoredSchedule]] = {}


def due(self: periodic._Core, listing: ScheduleList) -> list:  # type: ignore[type-arg]
    known = LOADED.setdefault(id(self), listing.schedules)
    fresh = {s.name: s for s in listing.schedules}
    # the port re-reads the watermarks and pauses with now, but keeps its first set of definitions
    current = [fresh[s.name] for s in known if s.name in fresh and fresh[s.name].digest == s.digest]
    if len(current) != len(known):
        LOADED[id(self)] = listing.schedules  # a gone or stale schedule: reload
        current = listing.schedules
    return ORIGINAL(self, ScheduleList(listing.now_ms, current))


patch(periodic._Core, "due", due)

if __name__ == "__main__":
    serve_reference()
