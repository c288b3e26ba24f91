"""Mutant: the client parses every watermark and pause time as an integer, so one written by hand
fails the whole listing and every tick: no schedule of the queue fires (RWQ-SCHED-021)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import periodic


def _ms(raw: bytes) -> int | None:
    return int(raw) if raw else None


vars(periodic)["_ms"] = _ms

if __name__ == "__main__":
    serve(WorkQueue)
