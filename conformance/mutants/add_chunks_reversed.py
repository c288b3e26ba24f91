"""Mutant: ``add_many`` sends its chunks of 1000 last first (popped off a stack); each chunk is in
order, the results are put back in input order, but later items become leasable first."""

from __future__ import annotations

from collections.abc import Iterable

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v


class StackQueue(WorkQueue):
    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        batch = list(items)
        for item_id, data in batch:
            v.encode_new_id(item_id)
            v.payload(data)
        chunks = [batch[start : start + v.MAX_BATCH] for start in range(0, len(batch), v.MAX_BATCH)]
        results = [super(StackQueue, self).add_many(chunk, delay_ms=delay_ms) for chunk in reversed(chunks)]
        return [flag for part in reversed(results) for flag in part]


if __name__ == "__main__":
    serve(StackQueue)
