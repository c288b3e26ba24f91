"""Mutant: ``schedule remove`` deletes the definition, payload and pause but forgets the
watermark: P:schedules:fired keeps a field for a schedule that no longer exists
(RWQ-SCHED-015)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit(
    "schedule",
    "for _, key in ipairs({data, fired, paused}) do removed",
    "for _, key in ipairs({data, paused}) do removed",
)

if __name__ == "__main__":
    serve(WorkQueue)
