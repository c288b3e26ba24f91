"""Mutant: the client never forgets an id of a window: each call declares the union of every
window of its kind it has received, so its KEYS grow without bound (RWQ-DECL-003)."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue


class Union(dict[Any, tuple[bytes, ...]]):
    def __setitem__(self, key: Any, window: tuple[bytes, ...]) -> None:
        super().__setitem__(key, tuple(dict.fromkeys([*self.get(key, ()), *window])))


class HoardingQueue(WorkQueue):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._windows = Union()


if __name__ == "__main__":
    serve(HoardingQueue)
