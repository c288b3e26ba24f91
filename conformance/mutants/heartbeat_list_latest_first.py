"""Mutant: ``heartbeat list`` reads the live workers latest deadline first (``ZREVRANGEBYSCORE``):
the order RWQ-LIVE-003 gives is earliest deadline first, the workers closest to expiring."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit(
    "heartbeat",
    "redis.call('ZRANGEBYSCORE', seen, '(' .. now, '+inf',",
    "redis.call('ZREVRANGEBYSCORE', seen, '+inf', '(' .. now,",
)

if __name__ == "__main__":
    serve(WorkQueue)
