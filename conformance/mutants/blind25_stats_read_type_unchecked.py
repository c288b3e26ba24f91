"""Blind mutant (issue #25): the ``stats`` script checks its keys' types for ``enable`` only; a read
of a series of another type is not reported as WRONG_TYPE (RWQ-STATS-005)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit(
    "stats",
    "if t ~= 'none' and t ~= pair[2] then",
    "if mode == 'enable' and t ~= 'none' and t ~= pair[2] then",
)


if __name__ == "__main__":
    serve(WorkQueue)
