"""Mutant: ``add`` also counts added items in a global, unprefixed key (``rwq:stats:added``)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue


class StatsQueue(WorkQueue):
    def add(self, item_id: str, data: bytes, *, delay_ms: int = 0) -> bool:
        added = super().add(item_id, data, delay_ms=delay_ms)
        self._redis.incr("rwq:stats:added")
        return added


if __name__ == "__main__":
    serve(StatsQueue)
