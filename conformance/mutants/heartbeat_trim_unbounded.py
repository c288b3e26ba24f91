"""Mutant: ``heartbeat beat`` removes every expired entry at once, without the bound of 100 per
beat: after an outage of a large fleet one beat does unbounded work (RWQ-LIVE-004)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("heartbeat", "'-inf', now, 'LIMIT', 0, 100)", "'-inf', now)")

if __name__ == "__main__":
    serve(WorkQueue)
