"""Mutant: the prefix is checked for everything but its length, so the empty prefix is accepted and
the queue lives at the root of the key space (``:queue``, ``:item:<id>``; RWQ-KEYS-011)."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import QueueKeys


class EmptyPrefixQueue(WorkQueue):
    def __init__(self, redis: Any, prefix: str, *, legacy_lease_key: bool = False) -> None:
        super().__init__(redis, prefix or "placeholder", legacy_lease_key=legacy_lease_key)
        self.keys = QueueKeys(prefix)


if __name__ == "__main__":
    serve(EmptyPrefixQueue)
