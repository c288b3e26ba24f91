"""Blind mutant (issue #25): ``leave`` removes from ``P:workers:seen`` every id that starts with the
given one (a lexicographic range, so ``w1`` also removes ``w10``) (RWQ-LIVE-003: list returns
exactly the live workers)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit(
    "heartbeat",
    "local removed = redis.call('ZREM', seen, id)",
    "local removed = redis.call('ZREMRANGEBYLEX', seen, '[' .. id, '[' .. id .. '\\255')",
)


if __name__ == "__main__":
    serve(WorkQueue)
