"""Mutant: ``complete.lua`` checks no type of the processing list, which only its LREM writes: the
item is deleted before the LREM fails on a processing list of another type (RWQ-SCRIPT-007)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("complete", "bad = bad or mistyped(processing, 'list') -- rwq:deferred\n", "")

if __name__ == "__main__":
    serve(WorkQueue)
