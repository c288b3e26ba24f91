"""Mutant: ``schedule put`` sets the watermark to now for a replaced schedule too: editing a
schedule drops the slots due meanwhile (RWQ-SCHED-013)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit(
    "schedule",
    "  if exists == 0 then redis.call('HSET', fired, name, now) end",
    "  redis.call('HSET', fired, name, now)",
)

if __name__ == "__main__":
    serve(WorkQueue)
