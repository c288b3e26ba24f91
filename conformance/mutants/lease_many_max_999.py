"""Mutant: ``lease_many`` checks its count with an exclusive bound (``count < 1000``), rejecting
the largest valid batch."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import InvalidArgument
from rwq.protocol.operations import Lease


class OffByOneQueue(WorkQueue):
    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        if isinstance(count, int) and count >= 1000:
            raise InvalidArgument(f"count must be in 1..999, got {count}")
        return super().lease_many(count, lease_ms)


if __name__ == "__main__":
    serve(OffByOneQueue)
