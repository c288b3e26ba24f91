"""Blind mutant (issue #25): the series expires at ``(minute + 61) * 60000``, one minute early: a
queue idle for 61 minutes loses counts the 60-minute window still needs (RWQ-STATS-004)."""

from __future__ import annotations

from _blind25 import edit_all
from _mutant import serve
from rwq.client import WorkQueue

edit_all("(minute + 62) * 60000", "(minute + 61) * 60000")


if __name__ == "__main__":
    serve(WorkQueue)
