"""Blind mutant (issue #25, written from SPEC alone): the counting scripts raise Redis's refusal of
``P:stats`` (NOPERM for a role whose ACL lines predate profile stats) instead of reading the flag
as missing, so an upgraded client stops a deployment's old roles (RWQ-STATS-009)."""

from __future__ import annotations

from _blind25 import edit_all
from _mutant import serve
from rwq.client import WorkQueue

edit_all(
    "values, existing, n = checked_without_flag(strings, s, n)",
    "error(type(existing) == 'table' and existing or values)",
)

if __name__ == "__main__":
    serve(WorkQueue)
