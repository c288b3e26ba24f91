"""Blind mutant (issue #25): ``beat`` removes the entries whose deadline is before now, not at or
before it (RWQ-LIVE-004)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit("heartbeat", "'-inf', now, 'LIMIT', 0, 100)", "'-inf', '(' .. now, 'LIMIT', 0, 100)")


if __name__ == "__main__":
    serve(WorkQueue)
