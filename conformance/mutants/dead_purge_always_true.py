"""Mutant: ``purge_dead`` reports True for every id once the script call succeeded, ignoring the
per-id 0 for ids that are not dead."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue


class OptimisticPurgeQueue(WorkQueue):
    def purge_dead(self, ids: Sequence[str]) -> list[bool]:
        return [True for _ in super().purge_dead(ids)]


if __name__ == "__main__":
    serve(OptimisticPurgeQueue)
