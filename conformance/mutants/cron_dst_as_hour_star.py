"""Mutant: a client's walk treats every hour field as ``*`` across DST, as robfig/cron and
croniter do: a fixed-time schedule skips a wall time in a spring-forward gap and fires a
repeated one twice (RWQ-SCHED-006)."""

from __future__ import annotations

import dataclasses

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import periodic
from rwq.protocol.cron import CronSchedule

_parse = CronSchedule.parse.__func__  # type: ignore[attr-defined]


def hour_star(cls: type[CronSchedule], expr: str, tz: str = "UTC") -> CronSchedule:
    parsed: CronSchedule = _parse(cls, expr, tz)
    return dataclasses.replace(parsed, hour_star=True)


CronSchedule.parse = classmethod(hour_star)  # type: ignore[method-assign,assignment]
periodic.cron_schedule.cache_clear()

if __name__ == "__main__":
    serve(WorkQueue)
