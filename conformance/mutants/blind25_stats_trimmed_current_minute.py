"""Blind mutant (issue #25): after a trim the count records ``trimmed`` as the current minute, not
``minute - 62``; the next minutes' trims then start after it and delete nothing until the
current minute is 62 minutes old (RWQ-STATS-004)."""

from __future__ import annotations

from _blind25 import edit_all
from _mutant import serve
from rwq.client import WorkQueue

edit_all("redis.call('HSET', series, 'trimmed', to)", "redis.call('HSET', series, 'trimmed', minute)")


if __name__ == "__main__":
    serve(WorkQueue)
