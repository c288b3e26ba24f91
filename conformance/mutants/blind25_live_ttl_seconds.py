"""Blind mutant (issue #25): ``beat`` reads ``ttl_ms`` as seconds and sets the deadline to
``now + ttl_ms * 1000`` (RWQ-LIVE-002)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit(
    "heartbeat",
    "redis.call('ZADD', seen, now + ttl_ms, id)",
    "redis.call('ZADD', seen, now + ttl_ms * 1000, id)",
)


if __name__ == "__main__":
    serve(WorkQueue)
