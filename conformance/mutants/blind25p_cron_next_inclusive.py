"""A port whose cron next_slot returns a slot at after_ms itself (least slot not before, not
after): RWQ-SCHED-006."""

from _blind25p import patch, serve_reference
from rwq.protocol.cron import CronSchedule

ORIGINAL = CronSchedule.next_slot
patch(
    CronSchedule,
    "next_slot",
    lambda self, after_ms: ORIGINAL(self, after_ms - 1) if after_ms > 0 else ORIGINAL(self, 0),
)

if __name__ == "__main__":
    serve_reference()
