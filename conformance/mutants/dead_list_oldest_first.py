"""Mutant: ``dead_list`` sorts the page it got by dead-letter time ascending ("chronological"),
oldest first, instead of keeping the script's newest-first order."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import DeadItem


class OldestFirstQueue(WorkQueue):
    def dead_items(self, *, offset: int = 0, count: int = 100) -> list[DeadItem]:
        return sorted(super().dead_items(offset=offset, count=count), key=lambda item: item.dead_at_ms)


if __name__ == "__main__":
    serve(OldestFirstQueue)
