"""Mutant: ``schedule resume`` deletes the pause and leaves the watermark where it was: the slots
that fell in the pause fire at the next tick (RWQ-SCHED-014)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("schedule", "  if not mark or mark < now then redis.call('HSET', fired, name, now) end", "")

if __name__ == "__main__":
    serve(WorkQueue)
