"""Mutant: the prefix's hash tag is never checked, so a cluster client accepts ``jobs``."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation
from rwq.protocol.operations import QueueKeys


class UntaggedPrefixQueue(WorkQueue):
    def __init__(self, redis: Any, prefix: str, *, legacy_lease_key: bool = False) -> None:
        super().__init__(redis, "{placeholder}", legacy_lease_key=legacy_lease_key)
        self.keys = QueueKeys(validation.prefix(prefix, cluster=False))


if __name__ == "__main__":
    serve(UntaggedPrefixQueue)
