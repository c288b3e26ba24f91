"""Mutant: ``stats enable`` sets the flag whether or not it exists: a second enable moves since
to now and reports that it turned stats on (RWQ-STATS-001)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("stats", "return redis.call('SET', flag, now, 'NX') and 1 or 0", "redis.call('SET', flag, now) return 1")

if __name__ == "__main__":
    serve(WorkQueue)
