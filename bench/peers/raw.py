"""Raw redis-py: a list of payloads, LMOVE into a processing list, LREM to complete."""

from __future__ import annotations

from collections.abc import Sequence
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Barrier
from typing import Any

import redis

from bench.core import stopwatch
from bench.peers.base import Drained, DrainProcess, Peer, ProcessJob, WakeConsumer, check_drained, now

QUEUE, PROCESSING = "raw:queue", "raw:processing"

HOW = {
    "enqueue_one": "LPUSH raw:queue <payload>, one command per item",
    "enqueue_batch": "pipeline (no MULTI) of one LPUSH per item, one round trip per batch",
    "drain_one": "LMOVE queue processing RIGHT LEFT, then LREM processing -1 <payload>: 2 round trips",
    "drain_batch": "pipeline of <batch> LMOVE, then pipeline of <batch> LREM: 2 round trips per batch",
    "drain_process": "each process: LMOVE + LREM until the queue is empty",
    "wake": "BLMOVE queue processing RIGHT LEFT 0 in the consumer, LPUSH in the producer",
    "memory": "the payload as a list element",
}


def _drain(r: redis.Redis, limit: int | None = None) -> int:
    done = 0
    while limit is None or done < limit:
        value = r.lmove(QUEUE, PROCESSING, "RIGHT", "LEFT")
        if value is None:
            return done
        r.lrem(PROCESSING, -1, value)  # type: ignore[arg-type]
        done += 1
    return done


def drain_process(job: ProcessJob, barrier: Barrier, counter: Any) -> Drained:
    """One of the drain processes."""
    r = redis.Redis.from_url(job.url)
    r.ping()
    barrier.wait()
    started = now()
    done = _drain(r)
    return (started, now(), done)


def wake_consumer(url: str, samples: int, conn: Connection) -> None:
    """Blocks in BLMOVE; reports when each item arrives."""
    r = redis.Redis.from_url(url)
    r.ping()
    conn.send("ready")
    for _ in range(samples):
        value = r.blmove(QUEUE, PROCESSING, 0, "RIGHT", "LEFT")
        conn.send(now())
        r.lrem(PROCESSING, -1, value)  # type: ignore[arg-type]


class Raw(Peer):
    """The baseline every ratio is taken against."""

    name = "raw"
    label = "raw redis-py"
    HOW = HOW

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.r = self.bench.client()

    def drain_target(self) -> DrainProcess:
        return drain_process

    def wake_target(self) -> WakeConsumer:
        return wake_consumer

    def warm_up(self, payload: bytes) -> None:
        self.r.ping()

    def enqueue_one(self, ids: Sequence[str], payload: bytes) -> float:
        r = self.r
        with stopwatch() as elapsed:
            for _ in ids:
                r.lpush(QUEUE, payload)
        return elapsed()

    def enqueue_batch(self, ids: Sequence[str], payload: bytes, batch: int) -> float:
        pipe = self.r.pipeline(transaction=False)
        with stopwatch() as elapsed:
            for start in range(0, len(ids), batch):
                for _ in ids[start : start + batch]:
                    pipe.lpush(QUEUE, payload)
                pipe.execute()
        return elapsed()

    def fill(self, ids: Sequence[str], payload: bytes) -> None:
        # Distinct values, so that an LREM has to find its own entry.
        values = [item_id.encode() + payload[32:] for item_id in ids]
        for start in range(0, len(values), 1000):
            self.r.lpush(QUEUE, *values[start : start + 1000])

    def drain_one(self, n: int) -> float:
        with stopwatch() as elapsed:
            done = _drain(self.r, n)
        check_drained(done, n, self.name)
        return elapsed()

    def drain_batch(self, n: int, batch: int) -> float:
        pipe = self.r.pipeline(transaction=False)
        done = 0
        with stopwatch() as elapsed:
            while done < n:
                for _ in range(min(batch, n - done)):
                    pipe.lmove(QUEUE, PROCESSING, "RIGHT", "LEFT")
                values = [value for value in pipe.execute() if value is not None]
                if not values:
                    break
                for value in values:
                    pipe.lrem(PROCESSING, -1, value)
                pipe.execute()
                done += len(values)
        check_drained(done, n, self.name)
        return elapsed()

    def wake_add(self, item_id: str, payload: bytes) -> None:
        self.r.lpush(QUEUE, payload)

    def close(self) -> None:
        self.r.close()
