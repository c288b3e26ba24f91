"""Redis Streams: XADD, a consumer group read with XREADGROUP, XACK to complete."""

from __future__ import annotations

from collections.abc import Sequence
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Barrier
from typing import Any

import redis

from bench.core import stopwatch
from bench.peers.base import Drained, DrainProcess, Peer, ProcessJob, WakeConsumer, check_drained, now

STREAM, GROUP = "stream", "group"

HOW = {
    "enqueue_one": "XADD stream * d <payload>, one command per item",
    "enqueue_batch": "pipeline (no MULTI) of one XADD per item",
    "drain_one": "XREADGROUP COUNT 1 + XACK: 2 round trips (acked entries stay in the stream until trimmed)",
    "drain_batch": "XREADGROUP COUNT <batch> + one XACK of the batch: 2 round trips per batch",
    "drain_process": "each process: its own consumer in one group, XREADGROUP COUNT 1 + XACK",
    "wake": "XREADGROUP BLOCK 0 COUNT 1 in the consumer, XADD in the producer",
    "memory": "one stream entry with one field",
}


def _group(r: redis.Redis) -> None:
    try:
        r.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
    except redis.ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


def _drain(r: redis.Redis, consumer: str, count: int = 1, limit: int | None = None) -> int:
    done = 0
    while limit is None or done < limit:
        size = count if limit is None else min(count, limit - done)
        reply: Any = r.xreadgroup(GROUP, consumer, {STREAM: ">"}, count=size)
        if not reply or not reply[0][1]:
            return done
        ids = [entry_id for entry_id, _fields in reply[0][1]]
        r.xack(STREAM, GROUP, *ids)
        done += len(ids)
    return done


def drain_process(job: ProcessJob, barrier: Barrier, counter: Any) -> Drained:
    """One of the drain processes: its own consumer of the shared group."""
    r = redis.Redis.from_url(job.url)
    r.ping()
    barrier.wait()
    started = now()
    done = _drain(r, f"c{job.index}")
    return (started, now(), done)


def wake_consumer(url: str, samples: int, conn: Connection) -> None:
    """Blocks in XREADGROUP; reports when each entry arrives."""
    r = redis.Redis.from_url(url)
    _group(r)
    conn.send("ready")
    got = 0
    while got < samples:
        reply: Any = r.xreadgroup(GROUP, "waker", {STREAM: ">"}, count=1, block=0)
        conn.send(now())
        r.xack(STREAM, GROUP, reply[0][1][0][0])
        got += 1


class Streams(Peer):
    """Redis Streams with a consumer group: the at-least-once primitive Redis ships."""

    name = "streams"
    label = "Redis Streams"
    HOW = HOW

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.r = self.bench.client()

    def drain_target(self) -> DrainProcess:
        return drain_process

    def wake_target(self) -> WakeConsumer:
        return wake_consumer

    def enqueue_one(self, ids: Sequence[str], payload: bytes) -> float:
        r = self.r
        fields = {b"d": payload}
        with stopwatch() as elapsed:
            for _ in ids:
                r.xadd(STREAM, fields)  # type: ignore[arg-type]
        return elapsed()

    def enqueue_batch(self, ids: Sequence[str], payload: bytes, batch: int) -> float:
        pipe = self.r.pipeline(transaction=False)
        fields = {b"d": payload}
        with stopwatch() as elapsed:
            for start in range(0, len(ids), batch):
                for _ in ids[start : start + batch]:
                    pipe.xadd(STREAM, fields)  # type: ignore[arg-type]
                pipe.execute()
        return elapsed()

    def fill(self, ids: Sequence[str], payload: bytes) -> None:
        _group(self.r)
        pipe = self.r.pipeline(transaction=False)
        fields = {b"d": payload}
        for start in range(0, len(ids), 1000):
            for _ in ids[start : start + 1000]:
                pipe.xadd(STREAM, fields)  # type: ignore[arg-type]
            pipe.execute()

    def drain_one(self, n: int) -> float:
        with stopwatch() as elapsed:
            done = _drain(self.r, "c", 1, n)
        check_drained(done, n, self.name)
        return elapsed()

    def drain_batch(self, n: int, batch: int) -> float:
        with stopwatch() as elapsed:
            done = _drain(self.r, "c", batch, n)
        check_drained(done, n, self.name)
        return elapsed()

    def wake_add(self, item_id: str, payload: bytes) -> None:
        self.r.xadd(STREAM, {b"d": payload})

    def close(self) -> None:
        self.r.close()
