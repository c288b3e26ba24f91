"""Mutant: ``add`` remembers the ids this client added and answers False for them without asking
Redis (a per-client cache to save round trips), so an id completed by another client cannot be
added again through it."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


class CachingQueue(WorkQueue):
    def __init__(self, redis: Any, prefix: str, *, legacy_lease_key: bool = False) -> None:
        super().__init__(redis, prefix, legacy_lease_key=legacy_lease_key)
        self._added: set[str] = set()

    def add(self, item_id: str, data: bytes, *, delay_ms: int = 0) -> bool:
        if item_id in self._added:
            return False
        added = super().add(item_id, data, delay_ms=delay_ms)
        self._added.add(item_id)
        return added

    def complete(self, item: Lease | str, *, require_lease: bool = False) -> bool:
        self._added.discard(item.id if isinstance(item, Lease) else item)
        return super().complete(item, require_lease=require_lease)


if __name__ == "__main__":
    serve(CachingQueue)
