"""Mutant: ``fire`` takes a slot only once it is strictly before the server's now (``slot >=
now`` is early): a scheduler waking exactly at the slot fires nothing (RWQ-SCHED-008)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("fire", "  if slot > now then", "  if slot >= now then")

if __name__ == "__main__":
    serve(WorkQueue)
