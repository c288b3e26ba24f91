"""Mutant: ``complete.lua`` skips its check of the queue on its own too, as it may inside
complete_and_lease only, whose lease part reads the queue before any write: an item found back in
a queue of another type is deleted before the LREM of the queue fails (RWQ-SCRIPT-007)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("complete", "local bad = mistyped(queue, 'list') -- rwq:deferred", "local bad = nil -- rwq:deferred")

if __name__ == "__main__":
    serve(WorkQueue)
