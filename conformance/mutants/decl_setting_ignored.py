"""Mutant: the client takes the declared-keys setting but calls every script in its core shape,
so the scripts touch keys the calls never declared (RWQ-DECL-001)."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue


class UndeclaredQueue(WorkQueue):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.declared_keys = False


if __name__ == "__main__":
    serve(UndeclaredQueue)
