"""Mutant: ``release`` treats a negative delay as 0 (release at once) instead of refusing it."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


class ClampedDelayQueue(WorkQueue):
    def release(self, lease: Lease, *, delay_ms: int = 0, **options: Any) -> bool:
        return super().release(lease, delay_ms=max(delay_ms, 0), **options)


if __name__ == "__main__":
    serve(ClampedDelayQueue)
