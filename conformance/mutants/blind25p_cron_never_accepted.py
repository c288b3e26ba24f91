"""A port that takes a cron expression whose days never match (30 February) instead of refusing
it: RWQ-SCHED-007."""

from _blind25p import patch, serve_reference
from rwq.protocol import cron
from rwq.protocol.cron import CronSchedule


def parse(cls: type[CronSchedule], expr: str, tz: str = "UTC") -> CronSchedule:
    texts = cron._fields(expr)
    zone = cron._zone(tz)
    minutes, hours, doms, months, dows = cron._expand(texts)
    return cls(
        expr,
        tz,
        minutes,
        hours,
        doms,
        months,
        dows,
        hour_star=texts[1] == "*",
        or_days=texts[2] != "*" and texts[4] != "*",
        zone=zone,
    )


patch(CronSchedule, "parse", classmethod(parse))

if __name__ == "__main__":
    serve_reference()
