"""Mutant: the trim deletes up to minute - 61, not minute - 62: the minute 61 minutes old, which
the 60-minute window of a read in the next minute still needs, is gone (RWQ-STATS-004)."""

from __future__ import annotations

from _mutant import serve
from _stats import edit_count
from rwq.client import WorkQueue

edit_count(
    "local from, to = math.max(trimmed + 1, minute - 123), minute - 62",
    "local from, to = math.max(trimmed + 1, minute - 123), minute - 61",
)

if __name__ == "__main__":
    serve(WorkQueue)
