"""Mutant: ``add`` sends ``delay_ms`` in seconds (``delay_ms // 1000``), a unit bug."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue


class DelaySecondsQueue(WorkQueue):
    def add(self, item_id: str, data: bytes, *, delay_ms: int = 0) -> bool:
        return super().add(item_id, data, delay_ms=delay_ms // 1000)


if __name__ == "__main__":
    serve(DelaySecondsQueue)
