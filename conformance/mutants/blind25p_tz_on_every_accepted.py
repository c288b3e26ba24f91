"""A port whose client takes a tz with an every_ms schedule and drops it silently instead of
refusing the definition: RWQ-SCHED-001."""

import dataclasses

from _blind25p import patch, serve_reference
from rwq.protocol.periodic import Schedule

ORIGINAL = Schedule.checked


def checked(self: Schedule) -> Schedule:
    if self.every_ms is not None and self.tz != "UTC":
        return ORIGINAL(dataclasses.replace(self, tz="UTC"))
    return ORIGINAL(self)


patch(Schedule, "checked", checked)

if __name__ == "__main__":
    serve_reference()
