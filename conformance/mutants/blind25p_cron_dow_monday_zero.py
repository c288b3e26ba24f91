"""A port whose cron walk numbers the days of week from Monday = 0 (the host language's weekday()),
not Sunday = 0: RWQ-SCHED-005."""

from datetime import date

from _blind25p import patch, serve_reference
from rwq.protocol.cron import CronSchedule


def matches_day(self: CronSchedule, d: date) -> bool:
    if d.month not in self.months:
        return False
    dom, dow = d.day in self.days_of_month, d.weekday() in self.days_of_week
    return (dom or dow) if self.or_days else (dom and dow)


patch(CronSchedule, "matches_day", matches_day)

if __name__ == "__main__":
    serve_reference()
