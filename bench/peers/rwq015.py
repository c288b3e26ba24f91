"""redis-work-queue 0.1.5 (PyPI), the library whose key layout RWQ/1 keeps."""

from __future__ import annotations

from collections.abc import Sequence
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Barrier
from typing import Any

import redis
from redis_work_queue import Item, KeyPrefix
from redis_work_queue import WorkQueue as LegacyQueue

from bench.core import LEASE_MS, stopwatch
from bench.peers.base import Drained, DrainProcess, Peer, ProcessJob, WakeConsumer, check_drained, now

NAME = "q015"
LEASE_S = LEASE_MS // 1000

HOW = {
    "enqueue_one": "add_item: MULTI SET item + LPUSH id EXEC, 1 round trip",
    "enqueue_batch": "add_item_to_pipeline x <batch> on one MULTI pipeline",
    "drain_one": "lease(block=False): RPOPLPUSH, GET, SETEX; complete: LREM, MULTI DEL DEL EXEC: "
    "5 round trips",
    "drain_process": "each process: lease(block=False) + complete until empty",
    "wake": "lease(block=True): BRPOPLPUSH, then GET and SETEX",
    "memory": "<P>:item:<id> string + the id in <P>:queue (the same layout as rwq)",
}


def _drain(r: redis.Redis, wq: Any, limit: int | None = None) -> int:
    done = 0
    while limit is None or done < limit:
        item = wq.lease(r, LEASE_S, block=False)
        if item is None:
            return done
        wq.complete(r, item)
        done += 1
    return done


def drain_process(job: ProcessJob, barrier: Barrier, counter: Any) -> Drained:
    """One drain process."""
    r = redis.Redis.from_url(job.url)
    wq = LegacyQueue(KeyPrefix(NAME))
    r.ping()
    barrier.wait()
    started = now()
    done = _drain(r, wq)
    return (started, now(), done)


def wake_consumer(url: str, samples: int, conn: Connection) -> None:
    """Blocks in BRPOPLPUSH; reports when each lease returns."""
    r = redis.Redis.from_url(url)
    wq = LegacyQueue(KeyPrefix(NAME))
    r.ping()
    conn.send("ready")
    for _ in range(samples):
        item = wq.lease(r, LEASE_S, block=True, timeout=0)
        conn.send(now())
        wq.complete(r, item)


class Rwq015(Peer):
    """redis-work-queue 0.1.5, its own client code unchanged."""

    name = "rwq015"
    label = "redis-work-queue 0.1.5"
    HOW = HOW

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.r = self.bench.client()
        self.wq = LegacyQueue(KeyPrefix(NAME))

    def drain_target(self) -> DrainProcess:
        return drain_process

    def wake_target(self) -> WakeConsumer:
        return wake_consumer

    def enqueue_one(self, ids: Sequence[str], payload: bytes) -> float:
        r, add = self.r, self.wq.add_item
        with stopwatch() as elapsed:
            for item_id in ids:
                add(r, Item(payload, id=item_id))
        return elapsed()

    def enqueue_batch(self, ids: Sequence[str], payload: bytes, batch: int) -> float:
        add = self.wq.add_item_to_pipeline
        with stopwatch() as elapsed:
            for start in range(0, len(ids), batch):
                pipe = self.r.pipeline()
                for item_id in ids[start : start + batch]:
                    add(pipe, Item(payload, id=item_id))
                pipe.execute()
        return elapsed()

    def fill(self, ids: Sequence[str], payload: bytes) -> None:
        add = self.wq.add_item_to_pipeline
        for start in range(0, len(ids), 1000):
            pipe = self.r.pipeline()
            for item_id in ids[start : start + 1000]:
                add(pipe, Item(payload, id=item_id))
            pipe.execute()

    def drain_one(self, n: int) -> float:
        with stopwatch() as elapsed:
            done = _drain(self.r, self.wq, n)
        check_drained(done, n, self.name)
        return elapsed()

    def wake_add(self, item_id: str, payload: bytes) -> None:
        self.wq.add_item(self.r, Item(payload, id=item_id))

    def close(self) -> None:
        self.r.close()
