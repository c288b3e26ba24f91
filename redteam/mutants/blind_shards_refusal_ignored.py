"""Blind mutant (RWQ-SHARD-009, RWQ-SEC-006): when Redis refuses the ``shards`` check (a non-admin
role on a queue with no recorded count), the port shrugs ("only the admin may record it") and
uses the queue unchecked, instead of reporting REDIS_ERROR and not using the queue: clients with
different shard counts then route one id to different shards."""

from __future__ import annotations

from _blind import serve_sharded
from rwq.errors import NoPermission
from rwq.sharded import ShardedWorkQueue


class UncheckedShardedQueue(ShardedWorkQueue):
    def record_shard_count(self) -> None:
        try:
            super().record_shard_count()
        except NoPermission:
            self._counted = True


if __name__ == "__main__":
    serve_sharded(UncheckedShardedQueue)
