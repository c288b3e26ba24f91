"""A port whose scheduler says its next slot is the first after the watermark, ignoring now, so a
schedule whose missed slots were skipped reports a slot in the past: RWQ-SCHED-011."""

from _blind25p import patch, serve_reference
from rwq import periodic
from rwq.protocol.periodic import Schedule


def next_slot(schedule: Schedule, mark: int | None, now_ms: int, nearest: int | None) -> int | None:
    slot = schedule.next_slot(mark if mark is not None else now_ms)
    return slot if nearest is None else min(nearest, slot)


patch(periodic._Core, "next_slot", staticmethod(next_slot))

if __name__ == "__main__":
    serve_reference()
