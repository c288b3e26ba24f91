"""Mutant: any ``{`` followed later by a ``}`` counts as a hash tag (a regex like ``{.*}``), so
``jobs:{}`` and ``jobs:{}{x}`` pass on a cluster client, though Redis hashes those keys whole."""

from __future__ import annotations

import re
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import InvalidArgument
from rwq.protocol import validation
from rwq.protocol.operations import QueueKeys


class BracesQueue(WorkQueue):
    def __init__(self, redis: Any, prefix: str, *, legacy_lease_key: bool = False) -> None:
        super().__init__(redis, "{placeholder}", legacy_lease_key=legacy_lease_key)
        if self._cluster and not re.search(r"\{.*\}", prefix):
            raise InvalidArgument(f"on Redis Cluster the prefix must contain a hash tag: {prefix!r}")
        self.keys = QueueKeys(validation.prefix(prefix, cluster=False))


if __name__ == "__main__":
    serve(BracesQueue)
