"""Mutant: ``requeue_dead`` sends at most the script's 1000 ids and reports False for the rest
instead of splitting the batch into calls of 1000: right for a few ids, wrong for many."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue


class FirstChunkQueue(WorkQueue):
    def requeue_dead(self, ids: Sequence[str]) -> list[bool]:
        return super().requeue_dead(ids[:1000]) + [False] * len(ids[1000:])


if __name__ == "__main__":
    serve(FirstChunkQueue)
