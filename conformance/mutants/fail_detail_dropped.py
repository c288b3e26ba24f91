"""Mutant: ``fail`` never sends the caller's detail, so a dead item loses its traceback."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailResult, Lease


class NoDetailQueue(WorkQueue):
    def fail(self, lease: Lease, reason: str = "", *, detail: str = "", **options: Any) -> FailResult:
        return super().fail(lease, reason, **options)


if __name__ == "__main__":
    serve(NoDetailQueue)
