"""A test double of redis-work-queue's current wire generation (G2: Go/Rust 0.3.0, NuGet 1.0.0, git HEAD).

No G2 Python package was ever published, so this replays, with raw redis-py, the exact command
sequences of MeVitae's HEAD Python client (``python/redis_work_queue/workqueue.py`` at 28e01f1;
research note ../shared/research/mevitae.md §3.1). Go, Rust and .NET send the same commands,
as non-transactional pipelines where Python uses MULTI/EXEC.

Keys: ``P:queue``, ``P:processing``, ``P:item:<id>``, ``P:lease:<id>`` (SETEX, whole seconds).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import redis


@dataclass(frozen=True)
class G2Item:
    id: str
    data: bytes


def _text(value: bytes | str) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value


class G2WorkQueue:
    """The G2 client of one queue ``prefix`` (MeVitae's ``KeyPrefix(prefix)``)."""

    def __init__(self, prefix: str) -> None:
        self.session = uuid.uuid4().hex
        self.queue_key = prefix + ":queue"
        self.processing_key = prefix + ":processing"
        self.lease_prefix = prefix + ":lease:"
        self.item_prefix = prefix + ":item:"

    def add_item(self, db: redis.Redis, item: G2Item) -> bool:
        """SETNX P:item:<id> data; if it was set, LPUSH P:queue id (two round trips, not atomic)."""
        if db.setnx(self.item_prefix + item.id, item.data):
            db.lpush(self.queue_key, item.id)
            return True
        return False

    def add_unique_item(self, db: redis.Redis, item: G2Item) -> None:
        """MULTI SET P:item:<id> data, LPUSH P:queue id EXEC."""
        pipe = db.pipeline(transaction=True)
        pipe.set(self.item_prefix + item.id, item.data)
        pipe.lpush(self.queue_key, item.id)
        pipe.execute()

    def queue_len(self, db: redis.Redis) -> int:
        return int(db.llen(self.queue_key))

    def processing(self, db: redis.Redis) -> int:
        return int(db.llen(self.processing_key))

    def lease(
        self, db: redis.Redis, lease_secs: int, *, block: bool = True, timeout: int = 0
    ) -> G2Item | None:
        """(B)RPOPLPUSH, GET P:item:<id>, SETEX P:lease:<id> lease_secs session.

        A ghost (no data key) is left in processing; the call loops only when blocking forever.
        """
        while True:
            if block:
                raw = db.brpoplpush(self.queue_key, self.processing_key, timeout=timeout)
            else:
                raw = db.rpoplpush(self.queue_key, self.processing_key)
            if raw is None:
                return None
            item_id = _text(raw)
            data = db.get(self.item_prefix + item_id)
            if data is None:
                if block and timeout == 0:
                    continue
                return None
            db.setex(self.lease_prefix + item_id, lease_secs, self.session)
            assert isinstance(data, bytes)
            return G2Item(item_id, data)

    def complete(self, db: redis.Redis, item: G2Item) -> bool:
        """MULTI DEL P:item:<id>, LREM P:processing 0 id, DEL P:lease:<id> EXEC; True iff DEL removed."""
        pipe = db.pipeline(transaction=True)
        pipe.delete(self.item_prefix + item.id)
        pipe.lrem(self.processing_key, 0, item.id)
        pipe.delete(self.lease_prefix + item.id)
        deleted, _, _ = pipe.execute()
        return deleted is not None and int(deleted) != 0

    def _lease_exists(self, db: redis.Redis, item_id: str) -> bool:
        return int(db.exists(self.lease_prefix + item_id)) != 0

    def _requeue(self, db: redis.Redis, item_id: str) -> None:
        pipe = db.pipeline(transaction=True)
        pipe.lrem(self.processing_key, 0, item_id)
        pipe.lpush(self.queue_key, item_id)
        pipe.execute()

    def light_clean(self, db: redis.Redis) -> None:
        """LRANGE processing; per id: EXISTS lease; if none, EXISTS item: MULTI LREM+LPUSH, else LREM."""
        for raw in db.lrange(self.processing_key, 0, -1):
            item_id = _text(raw)
            if not self._lease_exists(db, item_id):
                if db.exists(self.item_prefix + item_id):
                    self._requeue(db, item_id)
                else:
                    db.lrem(self.processing_key, 0, item_id)

    def deep_clean(self, db: redis.Redis) -> None:
        """MULTI KEYS P:item:* + LRANGE queue EXEC; per key not queued and without lease: LREM+LPUSH."""
        pipe = db.pipeline(transaction=True)
        pipe.keys(self.item_prefix + "*")
        pipe.lrange(self.queue_key, 0, -1)
        item_keys, queued = pipe.execute()
        main_queue = [_text(raw) for raw in queued]
        for key in item_keys:
            item_id = _text(key)[len(self.item_prefix) :]
            if item_id not in main_queue and not self._lease_exists(db, item_id):
                self._requeue(db, item_id)
