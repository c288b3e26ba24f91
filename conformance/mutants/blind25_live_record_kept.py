"""Blind mutant (issue #25): ``beat`` writes the record with HSETNX, so a worker's later beats never
replace the record of its first (RWQ-LIVE-002: set P:workers[id] to the record)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit("heartbeat", "redis.call('HSET', workers, id, ARGV[4])", "redis.call('HSETNX', workers, id, ARGV[4])")

if __name__ == "__main__":
    serve(WorkQueue)
