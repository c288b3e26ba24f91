"""Blind mutant (issue #25): ``stats enable`` sets the flag with NX but replies 1 whether or not this
call turned stats on (RWQ-STATS-001; the script header's reply)."""

from __future__ import annotations

from _blind25 import edit
from _mutant import serve
from rwq.client import WorkQueue

edit(
    "stats",
    "return redis.call('SET', flag, now, 'NX') and 1 or 0",
    "redis.call('SET', flag, now, 'NX')\n  return 1",
)


if __name__ == "__main__":
    serve(WorkQueue)
