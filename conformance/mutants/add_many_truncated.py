"""Mutant: ``add_many`` sends one script call of the first 1000 items and silently drops the rest."""

from __future__ import annotations

from collections.abc import Iterable

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v


class CappedQueue(WorkQueue):
    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        batch = list(items)
        for item_id, data in batch:
            v.encode_new_id(item_id)
            v.payload(data)
        return super().add_many(batch[: v.MAX_BATCH], delay_ms=delay_ms)


if __name__ == "__main__":
    serve(CappedQueue)
