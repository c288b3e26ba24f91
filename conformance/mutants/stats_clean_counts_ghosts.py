"""Mutant: ``light_clean`` counts the ghost entries it drops as recovered (RWQ-STATS-003: a dropped
ghost is no item recovered)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit(
    "light_clean",
    "stats_count(prefix, 'recovered', #requeued)",
    "stats_count(prefix, 'recovered', #requeued + dropped)",
)

if __name__ == "__main__":
    serve(WorkQueue)
