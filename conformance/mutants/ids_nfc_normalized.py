"""Mutant: ids are normalized to Unicode NFC before they are sent (as a port on a platform whose
strings normalize, or a helper that "cleans" ids, would), so two ids that differ only in their
composition become one item."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from _mutant import serve
from rwq.client import WorkQueue


class NormalizingQueue(WorkQueue):
    def add(self, item_id: str, data: bytes, *, delay_ms: int = 0) -> bool:
        return super().add(unicodedata.normalize("NFC", item_id), data, delay_ms=delay_ms)

    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        normalized = [(unicodedata.normalize("NFC", item_id), data) for item_id, data in items]
        return super().add_many(normalized, delay_ms=delay_ms)


if __name__ == "__main__":
    serve(NormalizingQueue)
