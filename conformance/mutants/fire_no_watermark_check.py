"""Mutant: ``fire`` trusts the item id alone and never compares a slot with the watermark: once
the slot's item was completed, the next tick adds it again (RWQ-SCHED-008)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("fire", "elseif mark_ms and slot <= mark_ms then", "elseif false then")

if __name__ == "__main__":
    serve(WorkQueue)
