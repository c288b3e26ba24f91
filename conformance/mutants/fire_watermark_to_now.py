"""Mutant: ``fire`` sets the watermark to the server's now rather than to the slot it fires: of
two slots due in one call, the second is then not after the watermark and is lost
(RWQ-SCHED-008)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("fire", "mark_ms, new_mark = slot, ARGV[i + 2]", "mark_ms, new_mark = now, string.format('%d', now)")

if __name__ == "__main__":
    serve(WorkQueue)
