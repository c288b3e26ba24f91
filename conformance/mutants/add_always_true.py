"""Mutant: ``add`` returns True whenever the script call succeeded, ignoring its added-flag."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue


class OptimisticQueue(WorkQueue):
    def add(self, item_id: str, data: bytes, *, delay_ms: int = 0) -> bool:
        super().add(item_id, data, delay_ms=delay_ms)
        return True


if __name__ == "__main__":
    serve(OptimisticQueue)
