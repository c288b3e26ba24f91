"""Blind mutant (issue #25): ``list`` always starts at the first live worker, whatever the offset
(RWQ-LIVE-003)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit("heartbeat", "'LIMIT', offset, count)", "'LIMIT', 0, count)")


if __name__ == "__main__":
    serve(WorkQueue)
