"""Mutant: ``requeue_dead`` reports True for every id once the script call succeeded, ignoring the
per-id 0 for ids that are not dead or are live or delayed again."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue


class OptimisticRequeueQueue(WorkQueue):
    def requeue_dead(self, ids: Sequence[str]) -> list[bool]:
        return [True for _ in super().requeue_dead(ids)]


if __name__ == "__main__":
    serve(OptimisticRequeueQueue)
