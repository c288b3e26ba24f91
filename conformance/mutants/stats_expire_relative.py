"""Mutant: the series expires 62 minutes after the count that created a field (PEXPIRE), not at
the end of minute + 62 (PEXPIREAT): its life depends on where in the minute the count fell
(RWQ-STATS-004)."""

from __future__ import annotations

from _mutant import serve
from _stats import edit_count
from rwq.client import WorkQueue

edit_count(
    "redis.call('PEXPIREAT', series, (minute + 62) * 60000)", "redis.call('PEXPIRE', series, 62 * 60000)"
)

if __name__ == "__main__":
    serve(WorkQueue)
