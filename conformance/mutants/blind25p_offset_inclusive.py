"""A port whose client takes offset_ms = every_ms (an inclusive bound) and sends it to the script,
which refuses it after I/O: RWQ-SCHED-001."""

import dataclasses

from _blind25p import patch, serve_reference
from rwq.protocol.periodic import Schedule

ORIGINAL = Schedule.checked


def checked(self: Schedule) -> Schedule:
    if isinstance(self.every_ms, int) and self.offset_ms == self.every_ms:
        ORIGINAL(dataclasses.replace(self, offset_ms=0))
        return self
    return ORIGINAL(self)


patch(Schedule, "checked", checked)

if __name__ == "__main__":
    serve_reference()
