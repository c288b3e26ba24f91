"""Mutant: ``release`` reports a failed connection as True ("given back"), so a caller whose release
never reached Redis believes the item is queued again while its lease runs on."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import RedisFailure
from rwq.protocol.operations import Lease


class HopefulReleaseQueue(WorkQueue):
    def release(self, lease: Lease, *, delay_ms: int = 0, **options: Any) -> bool:
        try:
            return super().release(lease, delay_ms=delay_ms, **options)
        except RedisFailure:
            return True


if __name__ == "__main__":
    serve(HopefulReleaseQueue)
