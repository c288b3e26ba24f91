"""Mutant: the queue prefix is not checked for glob characters, so ``jobs*`` is accepted."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import QueueKeys


class AnyPrefixQueue(WorkQueue):
    def __init__(self, redis: Any, prefix: str, *, legacy_lease_key: bool = False) -> None:
        super().__init__(redis, "placeholder", legacy_lease_key=legacy_lease_key)
        self.keys = QueueKeys(prefix)


if __name__ == "__main__":
    serve(AnyPrefixQueue)
