"""Mutant: ``light_clean.lua`` trusts the keys it read before promotion for every processing entry,
also for an id that promotion (or an earlier entry of the same call) has just changed: a ghost
entry of an id that a due delayed item brings back is dropped as a ghost after that item was
pushed, or an abandoned item seen twice is dead-lettered twice (RWQ-SCRIPT-007's single read)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("light_clean", "  if touched[id] then\n", "  if false then\n")

if __name__ == "__main__":
    serve(WorkQueue)
