"""Mutant: ``fail`` drops the delay the caller asked for, so the policy's backoff (with its jitter)
decides, and "retry in 10 minutes" comes back in seconds."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import FailResult, Lease


class BackoffAnywayQueue(WorkQueue):
    def fail(
        self, lease: Lease, reason: str = "", *, delay_ms: int | None = None, **options: Any
    ) -> FailResult:
        return super().fail(lease, reason, **options)


if __name__ == "__main__":
    serve(BackoffAnywayQueue)
