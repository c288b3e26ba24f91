"""A port whose scheduler sends the SHA1 of its own re-serialization of the definition, not of the
stored text, so a definition another client wrote is always stale: RWQ-SCHED-009."""

import dataclasses

from _blind25p import patch, serve_reference
from rwq import periodic
from rwq.protocol.periodic import ScheduleList

ORIGINAL = periodic._Core.due


def due(self: periodic._Core, listing: ScheduleList) -> list:  # type: ignore[type-arg]
    return [
        (dataclasses.replace(stored, definition=schedule.to_json()), schedule, slots)
        for stored, schedule, slots in ORIGINAL(self, listing)
    ]


patch(periodic._Core, "due", due)

if __name__ == "__main__":
    serve_reference()
