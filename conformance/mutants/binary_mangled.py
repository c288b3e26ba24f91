"""Mutant: payloads pass through a text string (UTF-8 with ``errors="replace"``), so bytes that
are not UTF-8 are replaced."""

from __future__ import annotations

from collections.abc import Iterable

from _mutant import serve
from rwq.client import WorkQueue


def _text(data: bytes) -> bytes:
    return data.decode("utf-8", "replace").encode("utf-8")


class TextPayloadQueue(WorkQueue):
    def add(self, item_id: str, data: bytes, *, delay_ms: int = 0) -> bool:
        return super().add(item_id, _text(data), delay_ms=delay_ms)

    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        return super().add_many([(item_id, _text(data)) for item_id, data in items], delay_ms=delay_ms)


if __name__ == "__main__":
    serve(TextPayloadQueue)
