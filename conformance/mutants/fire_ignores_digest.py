"""Mutant: ``fire`` never compares the definition's SHA1 with the call's digest: slots computed
from an older definition fire by the new one's watermark (RWQ-SCHED-009)."""

from __future__ import annotations

from _mutant import serve
from _script import edit
from rwq.client import WorkQueue

edit("fire", "if redis.sha1hex(definition) ~= digest then return {now, 'stale', reply_mark, {}} end", "")

if __name__ == "__main__":
    serve(WorkQueue)
