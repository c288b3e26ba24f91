"""A port that compares zone names case-insensitively, taking europe/london for Europe/London:
RWQ-SCHED-004."""

from zoneinfo import ZoneInfo

from _blind25p import patch, serve_reference
from rwq.protocol import cron

ORIGINAL = cron._zone


def zone(tz: object) -> ZoneInfo:
    if isinstance(tz, str):
        for name in cron._zone_names():
            if name.lower() == tz.lower():
                return ORIGINAL(name)
    return ORIGINAL(tz)


patch(cron, "_zone", zone)

if __name__ == "__main__":
    serve_reference()
