"""Mutant: the client takes the profile flat setting but never sends it, so its leases go to
``P:processing`` as without it (RWQ-FLAT-001)."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue


class ClassicQueue(WorkQueue):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.flat_in_flight = False


if __name__ == "__main__":
    serve(ClassicQueue)
