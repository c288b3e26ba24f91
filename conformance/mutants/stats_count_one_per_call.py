"""Mutant: a count adds 1 per call, not the call's amount: an add_many of two items, or a clean
that requeues three, counts one (RWQ-STATS-003)."""

from __future__ import annotations

from _mutant import serve
from _stats import edit_count
from rwq.client import WorkQueue

edit_count(
    "redis.pcall('HINCRBY', series, string.format('%d:%s', minute, counter), amount) ~= amount",
    "redis.pcall('HINCRBY', series, string.format('%d:%s', minute, counter), 1) ~= 1",
)

if __name__ == "__main__":
    serve(WorkQueue)
