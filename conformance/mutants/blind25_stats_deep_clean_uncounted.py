"""Blind mutant (issue #25): ``deep_clean requeue`` requeues orphans without counting them as
``recovered`` (RWQ-STATS-003, §22.1: deep_clean requeue counts the orphans it requeues)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit("deep_clean", "  if counting == 'string' then stats_count(prefix, 'recovered', #requeued) end\n", "")

if __name__ == "__main__":
    serve(WorkQueue)
