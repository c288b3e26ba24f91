"""A port whose scheduler says its next slot is the first after now, ignoring a watermark ahead of
now (after the server's clock stepped back): RWQ-SCHED-011."""

from _blind25p import patch, serve_reference
from rwq import periodic
from rwq.protocol.periodic import Schedule


def next_slot(schedule: Schedule, mark: int | None, now_ms: int, nearest: int | None) -> int | None:
    slot = schedule.next_slot(now_ms)
    return slot if nearest is None else min(nearest, slot)


patch(periodic._Core, "next_slot", staticmethod(next_slot))

if __name__ == "__main__":
    serve_reference()
