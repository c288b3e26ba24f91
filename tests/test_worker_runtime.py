"""Issue #21, the workers' runtime on a real Redis: handler kinds, burst, timeouts that never run an
item twice at once, the per-job log line, and halt (a second signal)."""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import redis

from rwq import AsyncWorkQueue, RetryLater, RetryPolicy, WorkQueue
from rwq.aio_worker import AsyncJob, AsyncWorker
from rwq.errors import InvalidType
from rwq.handlers import handler_kind
from rwq.worker import Job, Worker

DONE = "done"  # each handler's side effect: the id, pushed here


class Handlers:
    """Every kind of handler, each leaving the same side effect (RPUSH done <id>)."""

    def __init__(self, r: redis.Redis) -> None:
        self.r = r

    def method(self, job: Job) -> None:
        self.r.rpush(DONE, job.id)

    async def amethod(self, job: AsyncJob) -> None:
        await asyncio.sleep(0)
        self.r.rpush(DONE, job.id)


class SyncCall:
    def __init__(self, r: redis.Redis) -> None:
        self.r = r

    def __call__(self, job: Job) -> None:
        self.r.rpush(DONE, job.id)


class AsyncCall:
    def __init__(self, r: redis.Redis) -> None:
        self.r = r

    async def __call__(self, job: AsyncJob) -> None:
        await asyncio.sleep(0)
        self.r.rpush(DONE, job.id)


def push(r: redis.Redis, job: Job) -> None:
    r.rpush(DONE, job.id)


async def apush(r: redis.Redis, job: AsyncJob) -> None:
    await asyncio.sleep(0)
    r.rpush(DONE, job.id)


def sync_kinds(r: redis.Redis) -> dict[str, Callable[..., Any]]:
    return {
        "function": lambda job: push(r, job),
        "bound method": Handlers(r).method,
        "__call__": SyncCall(r),
        "partial": functools.partial(push, r),
        "nested partial": functools.partial(functools.partial(push), r),
    }


def async_kinds(r: redis.Redis) -> dict[str, Callable[..., Any]]:
    async def coroutine(job: AsyncJob) -> None:
        await apush(r, job)

    return {
        "coroutine function": coroutine,
        "bound method": Handlers(r).amethod,
        "async __call__": AsyncCall(r),
        "partial": functools.partial(apush, r),
        "partial of async __call__": functools.partial(AsyncCall(r)),
        "nested partial": functools.partial(functools.partial(apush), r),
    }


def run_burst(worker: Worker, timeout: float = 20.0) -> float:
    """Run a burst worker to its end in a thread; the seconds it took."""
    started = time.monotonic()
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        worker.stop()
        thread.join(timeout)
        pytest.fail(f"the burst worker did not stop within {timeout} s")
    return time.monotonic() - started


async def arun_burst(worker: AsyncWorker, timeout: float = 20.0) -> float:
    started = time.monotonic()
    await asyncio.wait_for(worker.run(), timeout)
    return time.monotonic() - started


def test_the_classifier_knows_every_kind(r: redis.Redis) -> None:
    for name, handler in sync_kinds(r).items():
        assert handler_kind(handler) == "sync", name
    for name, handler in async_kinds(r).items():
        assert handler_kind(handler) == "async", name
    assert handler_kind(AsyncCall) == "sync"  # calling the class makes an instance


ASYNC_KINDS = [
    "coroutine function",
    "bound method",
    "async __call__",
    "partial",
    "partial of async __call__",
    "nested partial",
]


@pytest.mark.parametrize("kind", ASYNC_KINDS)
def test_a_worker_refuses_an_async_handler_before_any_io(r: redis.Redis, queue: WorkQueue, kind: str) -> None:
    queue.add("a", b"x")
    before = {key: r.type(key) for key in r.scan_iter()}
    with pytest.raises(InvalidType, match="use AsyncWorker"):
        Worker(queue, async_kinds(r)[kind])
    assert {key: r.type(key) for key in r.scan_iter()} == before


@pytest.mark.parametrize("kind", ["function", "bound method", "__call__", "partial"])
async def test_an_async_worker_refuses_a_sync_handler(
    r: redis.Redis, aqueue: AsyncWorkQueue, kind: str
) -> None:
    with pytest.raises(InvalidType, match="use Worker"):
        AsyncWorker(aqueue, sync_kinds(r)[kind])
    assert r.llen(DONE) == 0  # never called


@pytest.mark.parametrize("kind", ["function", "bound method", "__call__", "partial", "nested partial"])
def test_every_sync_kind_runs_on_a_worker(r: redis.Redis, queue: WorkQueue, kind: str) -> None:
    queue.add_many([(f"i{n}", b"x") for n in range(10)])
    worker = Worker(queue, sync_kinds(r)[kind], concurrency=2, burst=True)
    run_burst(worker)
    assert worker.stats.completed == 10
    assert sorted(r.lrange(DONE, 0, -1)) == sorted(f"i{n}".encode() for n in range(10))


@pytest.mark.parametrize("kind", ASYNC_KINDS)
async def test_every_async_kind_runs_on_an_async_worker(
    r: redis.Redis, aqueue: AsyncWorkQueue, kind: str
) -> None:
    await aqueue.add_many([(f"i{n}", b"x") for n in range(10)])
    worker = AsyncWorker(aqueue, async_kinds(r)[kind], concurrency=2, burst=True)
    await arun_burst(worker)
    assert worker.stats.completed == 10
    assert sorted(r.lrange(DONE, 0, -1)) == sorted(f"i{n}".encode() for n in range(10))


def test_a_sync_handler_that_returns_a_coroutine_fails_its_item(
    r: redis.Redis, queue: WorkQueue, recwarn: pytest.WarningsRecorder
) -> None:
    """A plain wrapper around a coroutine function passes the check; its first call is caught:
    the item fails (never completed unrun) and the coroutine is closed, never 'never awaited'."""
    queue.add("a", b"x")
    handler = async_kinds(r)["partial"]
    failures: list[BaseException] = []

    def wrapper(job: Job) -> object:  # a plain function: it passes the check
        return handler(job)

    worker = Worker(
        queue,
        wrapper,
        retry=RetryPolicy(max_attempts=1),
        on_error=lambda job, exc: failures.append(exc),
        burst=True,
    )
    run_burst(worker)
    assert (worker.stats.completed, worker.stats.failed) == (0, 1)
    assert r.llen(DONE) == 0
    assert isinstance(failures[0], InvalidType)
    assert "AsyncWorker" in str(failures[0])
    assert queue.counts().dead == 1
    assert not [w for w in recwarn if "never awaited" in str(w.message)]


def test_burst_leaves_an_empty_queue_at_once(queue: WorkQueue) -> None:
    took = run_burst(Worker(queue, lambda job: None, concurrency=4, burst=True))
    assert took < 0.5


def test_burst_waits_for_the_items_in_hand(r: redis.Redis, queue: WorkQueue) -> None:
    """Slots that find nothing go on looking while one still works: its retry comes back."""
    queue.add_many([(f"i{n}", b"x") for n in range(20)])
    tries: Counter[str] = Counter()

    def flaky(job: Job) -> None:
        tries[job.id] += 1
        time.sleep(0.01)
        if job.id == "i19" and tries[job.id] == 1:
            raise RetryLater(0, "once")  # ready again at once
        r.rpush(DONE, job.id)

    worker = Worker(queue, flaky, concurrency=4, burst=True)
    run_burst(worker)
    assert worker.stats.completed == 20
    assert r.llen(DONE) == 20


async def test_an_async_burst_leaves_an_empty_queue_at_once(aqueue: AsyncWorkQueue) -> None:
    async def nothing(job: AsyncJob) -> None:
        pass

    assert await arun_burst(AsyncWorker(aqueue, nothing, concurrency=4, burst=True)) < 0.5


def test_a_timed_out_item_never_runs_twice_at_once_in_one_worker(queue: WorkQueue) -> None:
    """Each run sleeps past timeout_ms: the watchdog fails it (no policy: ready again at once), a
    free slot leases it again, and must wait for the first run to return before starting it."""
    queue.add("a", b"x")
    lock = threading.Lock()
    running: Counter[str] = Counter()
    most: Counter[str] = Counter()
    runs: Counter[str] = Counter()

    def slow(job: Job) -> None:
        with lock:
            running[job.id] += 1
            runs[job.id] += 1
            most[job.id] = max(most[job.id], running[job.id])
        time.sleep(0.4)
        with lock:
            running[job.id] -= 1

    worker = Worker(queue, slow, concurrency=3, timeout_ms=100, retry=None, shutdown_grace_ms=2_000)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    time.sleep(1.5)
    worker.stop()
    thread.join(10)
    assert not thread.is_alive()
    assert runs["a"] >= 2  # it was retried after each timeout
    assert most["a"] == 1, f"item 'a' ran {most['a']} times at once"
    assert worker.stats.failed >= 2


def test_a_handler_stuck_past_its_timeout_does_not_hold_the_shutdown(queue: WorkQueue) -> None:
    """Its item was failed at the timeout; run() returns after the grace period, leaving the
    thread behind (it used to wait for it forever)."""
    queue.add("a", b"x")
    entered, release = threading.Event(), threading.Event()

    def stuck(job: Job) -> None:
        entered.set()
        release.wait(60)

    worker = Worker(queue, stuck, timeout_ms=100, shutdown_grace_ms=200, poll_timeout_ms=100)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        assert entered.wait(5)
        time.sleep(0.3)  # past its timeout: failed
        worker.stop()
        thread.join(5)
        assert not thread.is_alive()
        assert worker.stats.failed == 1
    finally:
        release.set()


def test_each_settled_job_is_logged_with_its_fields(
    r: redis.Redis, queue: WorkQueue, caplog: pytest.LogCaptureFixture
) -> None:
    queue.set_retry_policy(RetryPolicy(max_attempts=2, backoff="fixed", base_ms=1))
    queue.add_many([("ok", b"x"), ("bad", b"x")])

    def handle(job: Job) -> None:
        if job.id == "bad":
            raise ValueError("no")

    caplog.set_level(logging.INFO, "rwq.worker")
    run_burst(Worker(queue, handle, burst=True, retry=None))
    time.sleep(0.05)  # bad's retry is due
    run_burst(Worker(queue, handle, burst=True, retry=None))
    settled = [rec for rec in caplog.records if hasattr(rec, "outcome")]
    fields = [(rec.queue, rec.id, rec.attempt, rec.outcome) for rec in settled]  # type: ignore[attr-defined]
    assert sorted(fields) == sorted(
        [
            (queue.prefix, "ok", 1, "completed"),
            (queue.prefix, "bad", 1, "failed"),
            (queue.prefix, "bad", 2, "dead"),
        ]
    )
    assert all(rec.levelno == logging.INFO and isinstance(rec.duration_ms, int) for rec in settled)  # type: ignore[attr-defined]


def test_halt_releases_the_items_in_hand_at_once(queue: WorkQueue) -> None:
    queue.add_many([("a", b"x"), ("b", b"x")])
    started = threading.Barrier(3)
    release = threading.Event()

    def stuck(job: Job) -> None:
        started.wait(5)
        release.wait(30)

    worker = Worker(queue, stuck, concurrency=2, shutdown_grace_ms=60_000, poll_timeout_ms=100)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        started.wait(5)
        worker.stop()
        time.sleep(0.2)
        assert thread.is_alive()  # the grace period: a minute
        halted = time.monotonic()
        worker.halt()
        thread.join(5)
        assert not thread.is_alive()
        assert time.monotonic() - halted < 1.0
        assert worker.stats.released == 2
        counts = queue.counts()
        assert (counts.queued, counts.processing) == (2, 0)
    finally:
        release.set()


async def test_an_async_halt_releases_the_items_in_hand_at_once(aqueue: AsyncWorkQueue) -> None:
    await aqueue.add_many([("a", b"x"), ("b", b"x")])
    started = asyncio.Event()

    async def stuck(job: AsyncJob) -> None:
        started.set()
        await asyncio.sleep(30)

    worker = AsyncWorker(aqueue, stuck, concurrency=2, shutdown_grace_ms=60_000, poll_timeout_ms=100)
    running = asyncio.ensure_future(worker.run())
    await asyncio.wait_for(started.wait(), 5)
    await asyncio.sleep(0.1)
    worker.stop()
    await asyncio.sleep(0.2)
    assert not running.done()
    halted = time.monotonic()
    worker.halt()
    await asyncio.wait_for(running, 5)
    assert time.monotonic() - halted < 1.0
    assert worker.stats.released == 2
    counts = await aqueue.counts()
    assert (counts.queued, counts.processing) == (2, 0)
