"""A port whose cron walk starts at the local date of after_ms, not the day before, so a slot that
a gap moved past midnight is missed: RWQ-SCHED-006."""

from datetime import datetime, timedelta, timezone

from _blind25p import patch, serve_reference
from rwq.protocol import cron
from rwq.protocol.cron import CronSchedule


def next_slot(self: CronSchedule, after_ms: int) -> int:
    d = datetime.fromtimestamp(after_ms // 1000, timezone.utc).astimezone(self.zone).date()
    best: int | None = None
    for _ in range(cron.NEVER_DAYS + 370):
        if best is not None and best <= cron._naive_ms(d) - cron._DAY_MS:
            return best
        if self.matches_day(d):
            for instant in self._instants(d, after_ms):
                if instant > after_ms and (best is None or instant < best):
                    best = instant
        d += timedelta(days=1)
    raise AssertionError(f"no slot of {self.expr!r}")


patch(CronSchedule, "next_slot", next_slot)
if __name__ == "__main__":
    serve_reference()
