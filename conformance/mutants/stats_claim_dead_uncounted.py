"""Mutant: a blocking lease's ``claim`` dead-letters an item leased too often without counting it
(RWQ-STATS-003)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("claim", "if counting == 'string' then stats_count(prefix, 'dead', 1) end", "")

if __name__ == "__main__":
    serve(WorkQueue)
