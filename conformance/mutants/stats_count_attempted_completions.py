"""Mutant: ``complete`` counts every item it was asked to complete, not the outcomes done: a
repeat, a missing id and a lease lost all count as completed (RWQ-STATS-003)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("complete", "    done = done + deleted\n", "    done = done + 1\n")

if __name__ == "__main__":
    serve(WorkQueue)
