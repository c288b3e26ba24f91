"""Mutant: an empty payload is taken for a missing one and refused with INVALID_ARGUMENT."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import InvalidArgument


class NonEmptyQueue(WorkQueue):
    def add(self, item_id: str, data: bytes, *, delay_ms: int = 0) -> bool:
        if not data:
            raise InvalidArgument("payload is required")
        return super().add(item_id, data, delay_ms=delay_ms)


if __name__ == "__main__":
    serve(NonEmptyQueue)
