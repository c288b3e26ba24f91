"""Blind mutant (issue #25): ``beat`` sets the deadline with ``ZADD GT``, so a beat with a shorter
``ttl_ms`` than the last never brings the deadline closer (RWQ-LIVE-002: set to now plus ttl_ms)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit(
    "heartbeat",
    "redis.call('ZADD', seen, now + ttl_ms, id)",
    "redis.call('ZADD', seen, 'GT', now + ttl_ms, id)",
)

if __name__ == "__main__":
    serve(WorkQueue)
