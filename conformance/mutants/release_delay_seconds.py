"""Mutant: ``release`` sends ``delay_ms`` in seconds (``delay_ms // 1000``), so the item is leased
again long before its due time."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


class ReleaseSecondsQueue(WorkQueue):
    def release(self, lease: Lease, *, delay_ms: int = 0, **options: Any) -> bool:
        return super().release(lease, delay_ms=delay_ms // 1000, **options)


if __name__ == "__main__":
    serve(ReleaseSecondsQueue)
