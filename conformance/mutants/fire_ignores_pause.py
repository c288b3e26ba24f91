"""Mutant: ``fire`` reads the pause but never refuses a paused schedule: its slots fire while it
is paused (RWQ-SCHED-009)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("fire", "if pause then return {now, 'paused', reply_mark, {}} end", "")

if __name__ == "__main__":
    serve(WorkQueue)
