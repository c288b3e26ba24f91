"""Mutant: ``heartbeat list`` lists workers whose deadline is at or after now (``>=``), so a worker
is still listed at the instant its deadline passes (RWQ-LIVE-003 wants deadline > now)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("heartbeat", "redis.call('ZRANGEBYSCORE', seen, '(' .. now,", "redis.call('ZRANGEBYSCORE', seen, now,")

if __name__ == "__main__":
    serve(WorkQueue)
