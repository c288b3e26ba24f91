"""Mutant: ``fire`` reads a watermark that is not decimal ms as no watermark and fires the slots
of the last grace_ms again, which may have run already (RWQ-SCHED-021)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("fire", "if mark and not string.match(mark, '^%d+$') then return {now, 'corrupt', '', {}} end", "")

if __name__ == "__main__":
    serve(WorkQueue)
