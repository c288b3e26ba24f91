"""Mutant: ``light_clean`` reports the ids it requeued but drops the ids it dead-lettered (the
script reply's dead list is not parsed)."""

from __future__ import annotations

import dataclasses

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import CleanReport


class QuietCleanQueue(WorkQueue):
    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        return dataclasses.replace(super().light_clean(chunk=chunk), dead=())


if __name__ == "__main__":
    serve(QuietCleanQueue)
