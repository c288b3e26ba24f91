"""Mutant: ``heartbeat beat`` never removes expired entries: a dead worker's record stays in
``P:workers`` until both keys expire, which never happens while any worker beats (RWQ-LIVE-004)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit(
    "heartbeat",
    "local expired = redis.call('ZRANGEBYSCORE', seen, '-inf', now, 'LIMIT', 0, 100)",
    "local expired = {}",
)

if __name__ == "__main__":
    serve(WorkQueue)
