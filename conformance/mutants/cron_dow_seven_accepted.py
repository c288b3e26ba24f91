"""Mutant: a client reads day of week 7 as Sunday, as croniter and cron-parser do: ``0 0 * * 7``
is accepted where SPEC 23.2 refuses it (RWQ-SCHED-004)."""

from __future__ import annotations

import re

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import periodic
from rwq.protocol.cron import CronSchedule

_parse = CronSchedule.parse.__func__  # type: ignore[attr-defined]


def sunday_seven(cls: type[CronSchedule], expr: str, tz: str = "UTC") -> CronSchedule:
    fields = expr.split()
    if len(fields) == 5:
        fields[4] = re.sub(r"\b7\b", "0", fields[4]).replace("1-0", "0-6")
        expr = " ".join(fields)
    return _parse(cls, expr, tz)  # type: ignore[no-any-return]


CronSchedule.parse = classmethod(sunday_seven)  # type: ignore[method-assign,assignment]
periodic.cron_schedule.cache_clear()

if __name__ == "__main__":
    serve(WorkQueue)
