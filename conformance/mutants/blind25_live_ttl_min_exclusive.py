"""Blind mutant (issue #25): ``beat`` refuses ``ttl_ms`` 1,000, the range's own low end (RWQ-LIVE-002:
1,000..3,600,000)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit("heartbeat", "integer(ARGV[3], 1000, 3600000)", "integer(ARGV[3], 1001, 3600000)")


if __name__ == "__main__":
    serve(WorkQueue)
