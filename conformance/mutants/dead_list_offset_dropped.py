"""Mutant: ``dead_list`` ignores ``offset`` and always returns the first page."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import DeadItem


class FirstPageQueue(WorkQueue):
    def dead_items(self, *, offset: int = 0, count: int = 100) -> list[DeadItem]:
        return super().dead_items(count=count)


if __name__ == "__main__":
    serve(FirstPageQueue)
