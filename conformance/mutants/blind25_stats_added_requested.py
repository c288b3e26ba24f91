"""Blind mutant (issue #25): ``add`` of ready items counts every id the call named, not the items it
added (an id that exists, or a repeat in the call, counted too) (RWQ-STATS-003, §22.1)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit(
    "add",
    "if types[flag] then stats_count(prefix, 'added', #added) end\nreturn result",
    "if types[flag] then stats_count(prefix, 'added', math.floor((#ARGV - 1) / 2)) end\nreturn result",
)


if __name__ == "__main__":
    serve(WorkQueue)
