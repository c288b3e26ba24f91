"""Mutant: the cron walk takes any ``after_ms`` its date library can hold and returns a slot
after 9000-01-01T00:00Z instead of refusing it (RWQ-SCHED-019)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import cron

cron.MAX_AFTER_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z, the end of Python's dates

if __name__ == "__main__":
    serve(WorkQueue)
