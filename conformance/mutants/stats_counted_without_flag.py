"""Mutant: ``complete`` counts whether or not ``P:stats`` exists: a queue that never turned stats
on gets a series (RWQ-STATS-002, RWQ-PROFILE-002)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("complete", "if batch_values[stats_at] then stats_count(", "if true then stats_count(")

if __name__ == "__main__":
    serve(WorkQueue)
