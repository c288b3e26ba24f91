"""Mutant: ``add_many`` files the script's answers by id, so an id repeated in the batch reports
its last answer (False) at its first occurrence too."""

from __future__ import annotations

from collections.abc import Iterable

from _mutant import serve
from rwq.client import WorkQueue


class ById(WorkQueue):
    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        batch = list(items)
        flags = super().add_many(batch, delay_ms=delay_ms)
        by_id = {item_id: flag for (item_id, _), flag in zip(batch, flags, strict=True)}
        return [by_id[item_id] for item_id, _ in batch]


if __name__ == "__main__":
    serve(ById)
