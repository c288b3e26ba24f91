"""Mutant: a client takes a day field that starts with ``*`` as unrestricted, as Vixie cron does:
``0 0 */2 * 1`` fires on odd days that are Mondays only (AND) instead of odd days or Mondays
(RWQ-SCHED-005)."""

from __future__ import annotations

import dataclasses

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import periodic
from rwq.protocol.cron import CronSchedule

_parse = CronSchedule.parse.__func__  # type: ignore[attr-defined]


def vixie(cls: type[CronSchedule], expr: str, tz: str = "UTC") -> CronSchedule:
    schedule: CronSchedule = _parse(cls, expr, tz)
    fields = expr.split()
    if len(fields) == 5 and (fields[2].startswith("*") or fields[4].startswith("*")):
        schedule = dataclasses.replace(schedule, or_days=False)
    return schedule


CronSchedule.parse = classmethod(vixie)  # type: ignore[method-assign,assignment]
periodic.cron_schedule.cache_clear()

if __name__ == "__main__":
    serve(WorkQueue)
