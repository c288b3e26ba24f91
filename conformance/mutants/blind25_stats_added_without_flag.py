"""Blind mutant (issue #25, written from SPEC alone): ``add`` counts the items it adds whether or not
the flag exists, creating ``P:stats:series`` on a queue whose stats are off (RWQ-STATS-002)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit(
    "add",
    "if types[flag] then stats_count(prefix, 'added', #added) end\nreturn result",
    "stats_count(prefix, 'added', #added)\nreturn result",
)

if __name__ == "__main__":
    serve(WorkQueue)
