"""BullMQ for Python (asyncio, Lua scripts on Redis): Queue.add / addBulk and a Worker."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Barrier
from typing import Any, TypeVar

import redis

from bench.core import stopwatch
from bench.peers.base import Drained, DrainProcess, Peer, ProcessJob, WakeConsumer, check_drained, now

try:
    from bullmq import Queue, Worker  # type: ignore[import-untyped,import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - the bench extra is not installed
    Queue = Worker = None

T = TypeVar("T")
NAME = "bq"
JOB_OPTS = {"removeOnComplete": True}
TIMEOUT_S = 600

HOW = {
    "enqueue_one": "await Queue.add(name, {d: payload}, removeOnComplete): EVALSHA addStandardJob",
    "enqueue_batch": "await Queue.addBulk(<batch> jobs): one pipeline of addStandardJob calls",
    "drain_one": "Worker(concurrency=1), no-op processor; timed until the n-th 'completed' event "
    "(moveToActive + moveToFinished per job; the Python worker does not fetch the next job "
    "in moveToFinished)",
    "drain_batch": "Worker(concurrency=<batch>): BullMQ has no batch lease in its open-source Python worker",
    "drain_process": "each process: Worker(concurrency=1) until all jobs completed",
    "wake": "Worker blocked on its marker (BZPOPMIN), Queue.add in the producer; timed to the processor call",
    "memory": "one job hash per job (+ its id in the wait list, the id counter, events stream)",
}


def _payload_data(payload: bytes) -> dict[str, str]:
    return {"d": payload.decode()}


async def _drain(url: str, n: int, concurrency: int) -> tuple[int, float]:
    """Run a Worker until ``n`` jobs completed: (completed, seconds from start to the n-th)."""
    finished = asyncio.Event()
    count, last = 0, 0.0

    async def process(job: Any, token: str) -> None:
        return None

    def completed(*_args: Any) -> None:
        nonlocal count, last
        count += 1
        if count >= n:
            last = now()
            finished.set()

    started = now()
    worker = Worker(NAME, process, {"connection": url, "concurrency": concurrency})
    worker.on("completed", completed)
    try:
        await asyncio.wait_for(finished.wait(), TIMEOUT_S)
    finally:
        await worker.close()
    return count, last - started


def drain_process(job: ProcessJob, barrier: Barrier, counter: Any) -> Drained:
    """One drain process: a Worker that stops once all processes together completed every job."""

    async def run() -> Drained:
        finished = asyncio.Event()
        done = 0
        last = 0.0

        async def process(_job: Any, _token: str) -> None:
            return None

        def completed(*_args: Any) -> None:
            nonlocal done, last
            done += 1
            last = now()
            with counter.get_lock():
                counter.value += 1

        async def watch() -> None:
            # Stop once every job completed, or when nothing was left to run for a second (a job
            # that failed or stalled is not counted, and the parent reports the shortfall).
            probe = redis.Redis.from_url(job.url)
            idle_since = None
            while counter.value < job.total:
                await asyncio.sleep(0.005)
                if probe.llen(f"bull:{NAME}:wait") or probe.llen(f"bull:{NAME}:active"):
                    idle_since = None
                elif idle_since is None:
                    idle_since = now()
                elif now() - idle_since > 1:
                    break
            probe.close()
            finished.set()

        await asyncio.to_thread(barrier.wait)
        started = now()
        worker = Worker(NAME, process, {"connection": job.url, "concurrency": 1})
        worker.on("completed", completed)
        watcher = asyncio.ensure_future(watch())
        await asyncio.wait_for(finished.wait(), TIMEOUT_S)
        await watcher
        await worker.close()
        return (started, last, done)

    return asyncio.run(run())


def wake_consumer(url: str, samples: int, conn: Connection) -> None:
    """A Worker blocked for its next job; the processor reports when it is called."""

    async def run() -> None:
        finished = asyncio.Event()
        count = 0

        async def process(_job: Any, _token: str) -> None:
            nonlocal count
            conn.send(now())
            count += 1
            if count >= samples:
                finished.set()

        worker = Worker(NAME, process, {"connection": url, "concurrency": 1})
        conn.send("ready")
        await asyncio.wait_for(finished.wait(), TIMEOUT_S)
        await worker.close()

    asyncio.run(run())


class BullMQ(Peer):
    """BullMQ's Python port, driven from a private event loop."""

    name = "bullmq"
    label = "bullmq"
    HOW = HOW
    slow = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if Queue is None:
            raise RuntimeError("bullmq is not installed (pip install -e '.[bench]')")
        self.loop = asyncio.new_event_loop()
        self.queue = self._run(self._open())

    async def _open(self) -> Any:
        return Queue(NAME, {"connection": self.bench.url})

    def _run(self, coro: Awaitable[T]) -> T:
        return self.loop.run_until_complete(coro)

    def drain_target(self) -> DrainProcess:
        return drain_process

    def wake_target(self) -> WakeConsumer:
        return wake_consumer

    def warm_up(self, payload: bytes) -> None:
        self.fill(["warm"], payload)
        self._run(_drain(self.bench.url, 1, 1))

    def enqueue_one(self, ids: Sequence[str], payload: bytes) -> float:
        async def run() -> None:
            data = _payload_data(payload)
            for _ in ids:
                await self.queue.add("job", data, JOB_OPTS)

        with stopwatch() as elapsed:
            self._run(run())
        return elapsed()

    def enqueue_batch(self, ids: Sequence[str], payload: bytes, batch: int) -> float:
        async def run() -> None:
            data = _payload_data(payload)
            for start in range(0, len(ids), batch):
                size = len(ids[start : start + batch])
                await self.queue.addBulk([{"name": "job", "data": data, "opts": JOB_OPTS}] * size)

        with stopwatch() as elapsed:
            self._run(run())
        return elapsed()

    def fill(self, ids: Sequence[str], payload: bytes) -> None:
        async def run() -> None:
            data = _payload_data(payload)
            for start in range(0, len(ids), 1000):
                size = len(ids[start : start + 1000])
                await self.queue.addBulk([{"name": "job", "data": data, "opts": JOB_OPTS}] * size)

        self._run(run())

    def drain_one(self, n: int) -> float:
        done, seconds = self._run(_drain(self.bench.url, n, 1))
        check_drained(done, n, self.name)
        return seconds

    def drain_batch(self, n: int, batch: int) -> float:
        done, seconds = self._run(_drain(self.bench.url, n, batch))
        check_drained(done, n, self.name)
        return seconds

    def wake_add(self, item_id: str, payload: bytes) -> None:
        self._run(self.queue.add("job", _payload_data(payload), JOB_OPTS))

    def close(self) -> None:
        self._run(self.queue.close())
        self.loop.close()
