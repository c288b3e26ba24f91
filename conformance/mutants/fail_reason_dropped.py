"""Mutant: ``fail`` never sends the caller's reason (always ""), so dead items lose why they died."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailResult, Lease


class NoReasonQueue(WorkQueue):
    def fail(self, lease: Lease, reason: str = "", **options: Any) -> FailResult:
        return super().fail(lease, **options)


if __name__ == "__main__":
    serve(NoReasonQueue)
