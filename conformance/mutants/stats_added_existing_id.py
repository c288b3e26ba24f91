"""Mutant: ``add`` counts every pair it was given as added, an id that exists or repeats
included (RWQ-STATS-003)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("add", "stats_count(prefix, 'added', #added)", "stats_count(prefix, 'added', (#ARGV - 1) / 2)")

if __name__ == "__main__":
    serve(WorkQueue)
