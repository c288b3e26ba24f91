"""Mutant: ``schedule list`` returns every field of ``P:schedules``, also one whose name no client
could have put (written by hand or by another tool): readers see it and schedulers try to fire
it (RWQ-SCHED-020)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("schedule", "    if valid_name(scanned[2][i]) then", "    if scanned[2][i] then")

if __name__ == "__main__":
    serve(WorkQueue)
