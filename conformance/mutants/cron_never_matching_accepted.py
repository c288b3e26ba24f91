"""Mutant: a client takes any expression its grammar accepts, with no check that some day
matches: ``0 0 30 2 *`` is accepted, and a scheduler walks for years to find no slot
(RWQ-SCHED-007)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import InvalidArgument
from rwq.protocol import cron, periodic
from rwq.protocol.cron import CronSchedule

_parse = CronSchedule.parse.__func__  # type: ignore[attr-defined]


def unchecked(cls: type[CronSchedule], expr: str, tz: str = "UTC") -> CronSchedule:
    try:
        return _parse(cls, expr, tz)  # type: ignore[no-any-return]
    except InvalidArgument as exc:
        if "RWQ-SCHED-007" not in str(exc):
            raise
    texts = cron._fields(expr)
    minutes, hours, doms, months, dows = cron._expand(texts)
    hour_star, or_days = texts[1] == "*", texts[2] != "*" and texts[4] != "*"
    return cls(expr, tz, minutes, hours, doms, months, dows, hour_star, or_days, zone=cron._zone(tz))


CronSchedule.parse = classmethod(unchecked)  # type: ignore[method-assign,assignment]
periodic.cron_schedule.cache_clear()

if __name__ == "__main__":
    serve(WorkQueue)
