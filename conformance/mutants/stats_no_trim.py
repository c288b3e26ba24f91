"""Mutant: a minute's first count never deletes the old minutes: the series keeps every minute
while the queue is busy (RWQ-STATS-004)."""

from __future__ import annotations

from _mutant import serve
from _stats import edit_count
from rwq.client import WorkQueue

edit_count("  if from <= to then\n", "  if false then\n")

if __name__ == "__main__":
    serve(WorkQueue)
