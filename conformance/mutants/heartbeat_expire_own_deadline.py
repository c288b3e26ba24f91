"""Mutant: ``heartbeat beat`` sets both keys to expire at the beating worker's own deadline rather
than the latest one: a short-ttl worker's beat makes the keys, with a long-ttl worker's live
entry, vanish early (RWQ-LIVE-004)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

for key in ("seen", "workers"):
    call = f"redis.call('PEXPIREAT', {key}, "
    edit("heartbeat", call + "latest[2])", call + "now + ttl_ms)")

if __name__ == "__main__":
    serve(WorkQueue)
