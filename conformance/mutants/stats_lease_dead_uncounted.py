"""Mutant: ``lease`` dead-letters an item leased too often without counting it: only fail and
the cleans count dead (RWQ-STATS-003)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("lease", "then stats_count(prefix, 'dead', buried) end", "then end")

if __name__ == "__main__":
    serve(WorkQueue)
