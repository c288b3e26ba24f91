"""A port whose cron walk converts a date's wall times with the UTC offset in force at its local
midnight, so slots after a DST change that day are an hour off: RWQ-SCHED-006."""

from collections.abc import Iterator
from datetime import date, datetime, timedelta

from _blind25p import patch, serve_reference
from rwq.protocol import cron
from rwq.protocol.cron import CronSchedule


def instants(self: CronSchedule, d: date, after_ms: int) -> Iterator[int]:
    offset = datetime(d.year, d.month, d.day, tzinfo=self.zone).utcoffset()
    assert offset is not None
    midnight = cron._naive_ms(d) - offset // timedelta(milliseconds=1)
    for hour in sorted(self.hours):
        for minute in sorted(self.minutes):
            instant = midnight + (hour * 60 + minute) * 60_000
            if instant > after_ms:
                yield instant
                return


patch(CronSchedule, "_instants", instants)

if __name__ == "__main__":
    serve_reference()
