"""Blind mutant (issue #25): ``list`` reads every entry of ``P:workers:seen``, expired ones included
(RWQ-LIVE-003: only deadlines after now)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit("heartbeat", "ZRANGEBYSCORE', seen, '(' .. now, '+inf'", "ZRANGEBYSCORE', seen, '-inf', '+inf'")


if __name__ == "__main__":
    serve(WorkQueue)
