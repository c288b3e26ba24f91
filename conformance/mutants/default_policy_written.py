"""Mutant: opening a queue stores the client's default retry policy in Redis, so a queue used
only with core operations gets a profile key."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import RetryPolicy


class DefaultPolicyQueue(WorkQueue):
    def __init__(self, redis: Any, prefix: str, *, legacy_lease_key: bool = False) -> None:
        super().__init__(redis, prefix, legacy_lease_key=legacy_lease_key)
        self.set_retry_policy(RetryPolicy())


if __name__ == "__main__":
    serve(DefaultPolicyQueue)
