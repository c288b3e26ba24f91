"""Mutant: ``add_many`` passes ``delay_ms`` with its first call of 1000 items only; the items of
later calls are added ready at once: right for a small batch, wrong past 1000."""

from __future__ import annotations

from collections.abc import Iterable

from _mutant import serve
from rwq.client import WorkQueue


class FirstChunkDelayQueue(WorkQueue):
    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        pairs = list(items)
        return super().add_many(pairs[:1000], delay_ms=delay_ms) + super().add_many(pairs[1000:])


if __name__ == "__main__":
    serve(FirstChunkDelayQueue)
