"""Mutant: ``add_many`` ignores ``delay_ms`` (its batch path never passes it on), so a delayed
batch is ready at once: right for ``add``, wrong for ``add_many``."""

from __future__ import annotations

from collections.abc import Iterable

from _mutant import serve
from rwq.client import WorkQueue


class UndelayedBatchQueue(WorkQueue):
    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        return super().add_many(items)


if __name__ == "__main__":
    serve(UndelayedBatchQueue)
