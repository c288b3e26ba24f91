"""A port that takes any zone its system's zone directory has (Factory too), not only the IANA
names: RWQ-SCHED-004."""

from zoneinfo import ZoneInfo

from _blind25p import patch, serve_reference
from rwq.errors import InvalidArgument
from rwq.protocol import cron


def zone(tz: object) -> ZoneInfo:
    if not isinstance(tz, str) or len(tz) > cron.MAX_TZ_BYTES or not cron._ZONE.fullmatch(tz):
        raise InvalidArgument("time zone must be an IANA zone name of at most 64 bytes (RWQ-SCHED-001)")
    try:
        return ZoneInfo(tz)
    except (KeyError, ValueError, OSError) as exc:
        raise InvalidArgument(f"time zone {tz!r} has no zone data here (RWQ-SCHED-001)") from exc


patch(cron, "_zone", zone)

if __name__ == "__main__":
    serve_reference()
