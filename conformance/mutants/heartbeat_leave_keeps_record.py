"""Mutant: ``heartbeat leave`` removes the worker's deadline but keeps its record in
``P:workers``, which then stays until both keys expire (RWQ-LIVE-003's list no longer shows it,
but the record of a worker that left lingers)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("heartbeat", "return math.max(removed, redis.call('HDEL', workers, id))", "return removed")

if __name__ == "__main__":
    serve(WorkQueue)
