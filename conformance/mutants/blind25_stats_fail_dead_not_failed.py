"""Blind mutant (issue #25): a ``fail`` that dead-letters counts ``dead`` only, not ``failed`` too, as
if ``failed`` meant the retried outcomes (RWQ-STATS-003, §22.1: failed is 1 for either outcome)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit(
    "fail",
    "    stats_count(prefix, 'failed', 1)\n    stats_count(prefix, 'dead', 1)",
    "    stats_count(prefix, 'dead', 1)",
)


if __name__ == "__main__":
    serve(WorkQueue)
