"""Mutant: ``light_clean`` clamps its chunk into 1..1000 instead of refusing one out of range."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import CleanReport


class ClampingQueue(WorkQueue):
    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        return super().light_clean(chunk=min(max(chunk, 1), v.MAX_BATCH))


if __name__ == "__main__":
    serve(ClampingQueue)
