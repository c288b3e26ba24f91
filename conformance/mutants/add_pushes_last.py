"""Mutant: ``add.lua`` writes the new items before it pushes their ids, as the script did before
its LPUSH became the queue's type check: on a queue of another type the items are written, then
the LPUSH fails, and the call leaves item keys no queue entry points to (RWQ-SCRIPT-007)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

PUSH = "if refused(redis.pcall('LPUSH', queue, unpack(added))) then return wrong_type(queue) end\n"
edit("add", PUSH + "for i = 2, #ARGV, 2 do\n", "for i = 2, #ARGV, 2 do\n")
edit("add", "\nreturn result\n", "\n" + PUSH + "return result\n")

if __name__ == "__main__":
    serve(WorkQueue)
