"""Mutant: ``light_clean`` does not add up the items its script calls promoted (reports 0)."""

from __future__ import annotations

import dataclasses

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import CleanReport


class NoPromotedQueue(WorkQueue):
    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        return dataclasses.replace(super().light_clean(chunk=chunk), promoted=0)


if __name__ == "__main__":
    serve(NoPromotedQueue)
