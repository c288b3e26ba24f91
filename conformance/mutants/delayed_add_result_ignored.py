"""Mutant: ``add`` with a delay reports True whenever the script call succeeded, without reading
its per-item flag, so adding a known id "succeeds" (the script still changes nothing)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue


class DelayedTrueQueue(WorkQueue):
    def add(self, item_id: str, data: bytes, *, delay_ms: int = 0) -> bool:
        added = super().add(item_id, data, delay_ms=delay_ms)
        return True if delay_ms > 0 else added


if __name__ == "__main__":
    serve(DelayedTrueQueue)
