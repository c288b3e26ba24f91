"""Mutant: ``fail`` sends its script call again when the reply is lost (a connection error), and
reports what the second run says: the item gone, for a failure the first run recorded."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import RedisFailure
from rwq.protocol.operations import FailResult, Lease


class RetryingFailQueue(WorkQueue):
    def fail(self, lease: Lease, reason: str = "", **options: Any) -> FailResult:
        try:
            return super().fail(lease, reason, **options)
        except RedisFailure:
            return super().fail(lease, reason, **options)


if __name__ == "__main__":
    serve(RetryingFailQueue)
