"""A port whose client takes missed in any case (Skip, ONCE) and stores it lower-cased:
RWQ-SCHED-001."""

import dataclasses

from _blind25p import patch, serve_reference
from rwq.protocol.periodic import Schedule

ORIGINAL = Schedule.checked


def checked(self: Schedule) -> Schedule:
    if isinstance(self.missed, str) and self.missed != self.missed.lower():
        return ORIGINAL(dataclasses.replace(self, missed=self.missed.lower()))
    return ORIGINAL(self)


patch(Schedule, "checked", checked)

if __name__ == "__main__":
    serve_reference()
