"""Mutant: ``stats disable`` deletes the flag but keeps the counts (RWQ-STATS-001)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("stats", "redis.call('DEL', flag, series)", "redis.call('DEL', flag)")

if __name__ == "__main__":
    serve(WorkQueue)
