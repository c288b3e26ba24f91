"""Blind mutant (issue #25): ``complete`` counts one completion per call, not per item completed
(a ``complete_many`` of three items counts 1) (RWQ-STATS-003)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit(
    "complete",
    "stats_count(prefix, 'completed', done)",
    "stats_count(prefix, 'completed', math.min(done, 1))",
)


if __name__ == "__main__":
    serve(WorkQueue)
