"""Blind mutant (issue #25): ``light_clean`` counts the items it requeues but not those it
dead-letters (a lease expired with no attempt left) (RWQ-STATS-003, §22.1 counter dead)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit("light_clean", "  stats_count(prefix, 'dead', #buried)\n", "")


if __name__ == "__main__":
    serve(WorkQueue)
