"""Mutant: under ``missed = skip``, ``fire`` measures lateness from the watermark instead of the
server's now: after a long stall the first missed slot is right after the watermark, so it fires
(RWQ-SCHED-010)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit(
    "fire",
    "elseif skip and now - slot > grace then",
    "elseif skip and mark_ms and slot - mark_ms > grace then",
)

if __name__ == "__main__":
    serve(WorkQueue)
