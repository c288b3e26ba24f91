"""Blind mutant (issue #25): ``add`` leaves the flag out of its key check and counts only when TYPE
says string, so a ``P:stats`` of another type reads as stats off instead of WRONG_TYPE
(RWQ-STATS-005: the flag of another type is a key of the wrong type like any other)."""

from __future__ import annotations

from _blind25 import edit, edit_all
from _mutant import serve
from rwq.client import WorkQueue

edit("add", "{delayed, 'zset', dead, 'zset', flag, 'string'}", "{delayed, 'zset', dead, 'zset'}")
edit("add", "absent[7], absent[8] = delayed", "absent[5], absent[6] = delayed")
edit_all("if types[flag] then stats_count(", "if redis.call('TYPE', flag).ok == 'string' then stats_count(")


if __name__ == "__main__":
    serve(WorkQueue)
