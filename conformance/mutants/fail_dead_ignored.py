"""Mutant: ``fail`` ignores ``dead`` and records an ordinary failure, so an item no retry can fix is
retried until its attempts run out."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailResult, Lease


class RetriesAnywayQueue(WorkQueue):
    def fail(self, lease: Lease, reason: str = "", *, dead: bool = False, **options: Any) -> FailResult:
        return super().fail(lease, reason, **options)


if __name__ == "__main__":
    serve(RetriesAnywayQueue)
