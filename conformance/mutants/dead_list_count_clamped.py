"""Mutant: ``dead_items`` clamps its page size into 1..1000 instead of refusing one out of range."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import DeadItem


class ClampedPageQueue(WorkQueue):
    def dead_items(self, *, offset: int = 0, count: int = 100) -> list[DeadItem]:
        return super().dead_items(offset=offset, count=min(max(count, 1), v.MAX_BATCH))


if __name__ == "__main__":
    serve(ClampedPageQueue)
