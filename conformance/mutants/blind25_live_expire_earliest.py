"""Blind mutant (issue #25): ``beat`` sets both keys to expire at the earliest deadline in
``P:workers:seen``, not the latest (RWQ-LIVE-004)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit(
    "heartbeat",
    "redis.call('ZRANGE', seen, -1, -1, 'WITHSCORES')",
    "redis.call('ZRANGE', seen, 0, 0, 'WITHSCORES')",
)


if __name__ == "__main__":
    serve(WorkQueue)
