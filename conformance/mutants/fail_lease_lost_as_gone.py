"""Mutant: ``fail`` by a caller that lost its lease reports the item as gone instead of raising
``LEASE_LOST`` (the reply's -1 is read as "not there")."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import LeaseLost
from rwq.protocol.operations import FailOutcome, FailResult, Lease


class GoneQueue(WorkQueue):
    def fail(self, lease: Lease, reason: str = "", **options: Any) -> FailResult:
        try:
            return super().fail(lease, reason, **options)
        except LeaseLost:
            return FailResult(FailOutcome.GONE, 0)


if __name__ == "__main__":
    serve(GoneQueue)
