"""Mutant: the port joins prefix and key name with a colon only when the prefix does not already
end with one, so the prefix ``jobs:`` gets ``jobs:queue`` instead of ``jobs::queue``."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import QueueKeys


class ColonQueue(WorkQueue):
    def __init__(self, redis: Any, prefix: str, *, legacy_lease_key: bool = False) -> None:
        super().__init__(redis, prefix, legacy_lease_key=legacy_lease_key)
        if prefix.endswith(":"):
            self.keys = QueueKeys(prefix[:-1])


if __name__ == "__main__":
    serve(ColonQueue)
