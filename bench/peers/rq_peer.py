"""RQ: enqueue a no-op function call, and a SimpleWorker (no fork) that performs the jobs."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Barrier
from typing import Any

import redis

from bench.core import stopwatch
from bench.peers.base import Drained, DrainProcess, Peer, ProcessJob, WakeConsumer, check_drained, now

try:
    from rq import Queue, SimpleWorker
except ImportError:  # pragma: no cover - the bench extra is not installed
    Queue = SimpleWorker = None  # type: ignore[assignment,misc,unused-ignore]

NAME = "rqb"
_wake_conn: Connection | None = None
_performed = [0]  # jobs this process performed (SimpleWorker runs them in-process)

HOW = {
    "enqueue_one": "Queue.enqueue(noop, payload, result_ttl=0): a job hash + LPUSH, one MULTI pipeline",
    "enqueue_batch": "Queue.enqueue_many(<batch> prepared jobs): one pipeline",
    "drain_one": "SimpleWorker(burst=True).work(): dequeue, perform the no-op in-process, "
    "finish (registries, result_ttl=0 deletes the job); the only worker RQ offers, so per-job "
    "bookkeeping is part of the figure",
    "drain_process": "each process: SimpleWorker(burst=True).work()",
    "wake": "SimpleWorker blocked in its dequeue (BLMOVE), enqueue in the producer; timed to the job call",
    "memory": "one job hash per job (pickled call) + its id in the queue list",
}


def noop(payload: bytes) -> None:
    """The job body: only counts."""
    _performed[0] += 1


def stamp(payload: bytes) -> None:
    """The wake-up job body: tells the parent when the job started."""
    assert _wake_conn is not None
    _wake_conn.send(now())


def _quiet() -> None:
    logging.getLogger("rq.worker").setLevel(logging.WARNING)


def _worker(r: redis.Redis) -> Any:
    return SimpleWorker([Queue(NAME, connection=r)], connection=r)


def drain_process(job: ProcessJob, barrier: Barrier, counter: Any) -> Drained:
    """One drain process: a burst SimpleWorker."""
    _quiet()
    r = redis.Redis.from_url(job.url)
    worker = _worker(r)
    before = _performed[0]
    barrier.wait()
    started = now()
    worker.work(burst=True, logging_level="WARNING")
    return (started, now(), _performed[0] - before)


def wake_consumer(url: str, samples: int, conn: Connection) -> None:
    """A SimpleWorker waiting for jobs; the job body reports when it runs."""
    global _wake_conn  # noqa: PLW0603 - the job body runs in this process and needs the pipe
    _wake_conn = conn
    _quiet()
    r = redis.Redis.from_url(url)
    worker = _worker(r)
    conn.send("ready")
    worker.work(burst=False, max_jobs=samples, logging_level="WARNING")


class Rq(Peer):
    """RQ, with its in-process SimpleWorker."""

    name = "rq"
    label = "rq"
    HOW = HOW
    slow = True
    max_n = 1_000

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if Queue is None:
            raise RuntimeError("rq is not installed (pip install -e '.[bench]')")
        _quiet()
        self.r = self.bench.client()
        self.queue = Queue(NAME, connection=self.r)

    def drain_target(self) -> DrainProcess:
        return drain_process

    def wake_target(self) -> WakeConsumer:
        return wake_consumer

    def warm_up(self, payload: bytes) -> None:
        self.fill(["warm"], payload)
        self.drain_one(1)

    def enqueue_one(self, ids: Sequence[str], payload: bytes) -> float:
        enqueue = self.queue.enqueue
        with stopwatch() as elapsed:
            for _ in ids:
                enqueue(noop, payload, result_ttl=0)
        return elapsed()

    def enqueue_batch(self, ids: Sequence[str], payload: bytes, batch: int) -> float:
        with stopwatch() as elapsed:
            for start in range(0, len(ids), batch):
                size = len(ids[start : start + batch])
                self.queue.enqueue_many(
                    [Queue.prepare_data(noop, (payload,), result_ttl=0) for _ in range(size)]
                )
        return elapsed()

    def fill(self, ids: Sequence[str], payload: bytes) -> None:
        for start in range(0, len(ids), 1000):
            size = len(ids[start : start + 1000])
            self.queue.enqueue_many([Queue.prepare_data(noop, (payload,), result_ttl=0) for _ in range(size)])

    def drain_one(self, n: int) -> float:
        worker = _worker(self.r)
        before = _performed[0]
        with stopwatch() as elapsed:
            worker.work(burst=True, logging_level="WARNING")
        check_drained(_performed[0] - before, n, self.name)
        return elapsed()

    def wake_add(self, item_id: str, payload: bytes) -> None:
        self.queue.enqueue(stamp, payload, result_ttl=0)

    def close(self) -> None:
        self.r.close()
