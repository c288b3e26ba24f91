"""Mutant: ``add`` sends ``delay_ms + 1`` for a delayed item (the port reads "due" as strictly
after ``delay_ms``), so the item is not leasable at exactly its due time."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue


class ExclusiveDueQueue(WorkQueue):
    def add(self, item_id: str, data: bytes, *, delay_ms: int = 0) -> bool:
        return super().add(item_id, data, delay_ms=delay_ms + 1 if delay_ms else 0)


if __name__ == "__main__":
    serve(ExclusiveDueQueue)
