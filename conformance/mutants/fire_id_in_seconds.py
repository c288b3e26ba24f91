"""Mutant: ``fire`` names a slot's item with the slot in seconds (``n@<s>``), as a port using a
seconds clock would: other clients' schedulers add other ids for the same slots (RWQ-SCHED-002)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit(
    "fire",
    "  ids[#ids + 1] = name .. '@' .. text",
    "  ids[#ids + 1] = name .. '@' .. string.format('%d', math.floor(slot / 1000))",
)

if __name__ == "__main__":
    serve(WorkQueue)
