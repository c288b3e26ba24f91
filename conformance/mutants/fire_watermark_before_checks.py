"""Mutant: ``fire`` moves the watermark as soon as it has decided the slots, before the key
checks of the items it adds: a queue key of another type refuses the call with WRONG_TYPE, and
the slot is lost all the same (RWQ-SCHED-008, RWQ-SCRIPT-003)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit(
    "fire",
    "if not new_mark then return {now, 'ok', reply_mark, outcomes} end",
    "if not new_mark then return {now, 'ok', reply_mark, outcomes} end\n"
    "redis.call('HSET', fired, name, new_mark)",
)

if __name__ == "__main__":
    serve(WorkQueue)
