"""Blind mutant (issue #25): the series' expiry is set with EXPIREAT to ``(minute + 62) * 60000``,
a time in ms read as seconds, so the series never expires when the queue is idle (RWQ-STATS-004)."""

from __future__ import annotations

from _blind25 import edit_all
from _mutant import serve
from rwq.client import WorkQueue

edit_all(
    "redis.call('PEXPIREAT', series, (minute + 62) * 60000)",
    "redis.call('EXPIREAT', series, (minute + 62) * 60000)",
)


if __name__ == "__main__":
    serve(WorkQueue)
