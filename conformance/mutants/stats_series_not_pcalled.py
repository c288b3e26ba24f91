"""Mutant: the count runs its HINCRBY with redis.call: a series of another type fails the
operation after its writes, instead of counting nothing (RWQ-STATS-005)."""

from __future__ import annotations

from _mutant import serve
from _stats import edit_count
from rwq.client import WorkQueue

edit_count("redis.pcall('HINCRBY'", "redis.call('HINCRBY'")

if __name__ == "__main__":
    serve(WorkQueue)
