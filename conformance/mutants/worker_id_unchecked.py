"""Mutant: the client sends any worker id to the script and leaves its check to the script, which
refuses it only after the call went out: bad input must be refused before any I/O (RWQ-ERR-002,
RWQ-LIVE-002)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import live

vars(live)["worker_id"] = lambda value: value.encode("utf-8") if isinstance(value, str) else value

if __name__ == "__main__":
    serve(WorkQueue)
