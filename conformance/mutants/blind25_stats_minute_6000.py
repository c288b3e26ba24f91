"""Blind mutant (issue #25, written from SPEC alone): the stats count files its events under
``floor(now_ms / 6000)``, a zero dropped from the minute's 60,000 ms, so each count lands in a
field the read never looks at (RWQ-STATS-003)."""

from __future__ import annotations

from _blind25 import edit_all
from _mutant import serve
from rwq.client import WorkQueue

edit_all("math.floor(stats_now / 60000)", "math.floor(stats_now / 6000)")


if __name__ == "__main__":
    serve(WorkQueue)
