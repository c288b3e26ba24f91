"""Mutant: the client takes the profile ack setting but never WAITs, so a write that no replica
has is reported as done (RWQ-ACK-001)."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue


class NoWaitQueue(WorkQueue):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.wait = None


if __name__ == "__main__":
    serve(NoWaitQueue)
