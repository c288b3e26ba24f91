"""A port whose scheduler raises on a definition it cannot read, so one bad schedule stops the whole
tick: RWQ-SCHED-017."""

from _blind25p import patch, serve_reference
from rwq import periodic
from rwq.protocol.periodic import Schedule, StoredSchedule


def parsed(self: periodic._Core, stored: StoredSchedule) -> Schedule | None:
    return stored.schedule()


patch(periodic._Core, "parsed", parsed)

if __name__ == "__main__":
    serve_reference()
