"""Blind mutant (issue #25): ``stats disable`` deletes the flag and the series only when the flag
exists, so a series left without its flag (or of another type) is never repaired (RWQ-STATS-001)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit(
    "stats", "  redis.call('DEL', flag, series)\n", "  if on == 1 then redis.call('DEL', flag, series) end\n"
)


if __name__ == "__main__":
    serve(WorkQueue)
