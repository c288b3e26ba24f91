"""Blind mutant (issue #25): ``beat`` removes expired entries from ``P:workers:seen`` but leaves their
records in ``P:workers`` (RWQ-LIVE-004: from both keys)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit("heartbeat", "  redis.call('HDEL', workers, unpack(expired))\n", "")


if __name__ == "__main__":
    serve(WorkQueue)
