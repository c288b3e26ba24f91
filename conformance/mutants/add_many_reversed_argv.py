"""Mutant: ``add_many`` builds the script's ARGV by prepending each pair, so one call adds its
items last first (the results are reversed back into input order)."""

from __future__ import annotations

from collections.abc import Iterable

from _mutant import serve
from rwq.client import WorkQueue


class PrependQueue(WorkQueue):
    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        batch = list(items)
        return list(reversed(super().add_many(list(reversed(batch)), delay_ms=delay_ms)))


if __name__ == "__main__":
    serve(PrependQueue)
