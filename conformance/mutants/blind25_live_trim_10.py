"""Blind mutant (issue #25): each ``beat`` removes up to 10 expired entries, not 100 (RWQ-LIVE-004)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit("heartbeat", "'-inf', now, 'LIMIT', 0, 100)", "'-inf', now, 'LIMIT', 0, 10)")


if __name__ == "__main__":
    serve(WorkQueue)
