"""Mutant: on a cluster client the prefix is wrapped in braces once more ("to be sure it has a hash
tag"), so the queue's keys are not ``P:...`` and live in another slot, on another node."""

from __future__ import annotations

from typing import Any

from redis.cluster import RedisCluster

from _mutant import serve
from rwq.client import WorkQueue


class RewrappingQueue(WorkQueue):
    def __init__(self, redis: Any, prefix: str, *, legacy_lease_key: bool = False) -> None:
        wrapped = "{" + prefix + "}" if isinstance(redis, RedisCluster) else prefix
        super().__init__(redis, wrapped, legacy_lease_key=legacy_lease_key)


if __name__ == "__main__":
    serve(RewrappingQueue)
