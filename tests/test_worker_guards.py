"""Issue #21, the red team's worker findings on a real Redis: handlers that would complete an item
unrun (B1, B1b), one id run twice at once in one worker after a lost lease (B3), failures that
crashed the worker or were refunded (B5, B5b), and RetryLater(0) without a policy (B5c)."""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
import redis

from rwq import AsyncWorkQueue, Counts, RetryLater, RetryPolicy, WorkQueue
from rwq.aio_worker import AsyncJob, AsyncWorker
from rwq.errors import InvalidType
from rwq.testing import adrain, drain
from rwq.worker import FALLBACK_DELAY_MS, Job, Worker, WorkerStats, failure_detail, failure_reason

ONE_ATTEMPT = RetryPolicy(max_attempts=1)


def gen(job: Job) -> Iterator[None]:
    yield


async def agen(job: AsyncJob) -> AsyncIterator[None]:
    yield


class Generators:
    def method(self, job: Job) -> Iterator[None]:
        yield

    async def amethod(self, job: AsyncJob) -> AsyncIterator[None]:
        yield


class GenCall:
    def __call__(self, job: Job) -> Iterator[None]:
        yield


class AgenCall:
    async def __call__(self, job: AsyncJob) -> AsyncIterator[None]:
        yield


GENERATORS: dict[str, object] = {
    "generator function": gen,
    "async generator function": agen,
    "generator method": Generators().method,
    "async generator method": Generators().amethod,
    "generator __call__": GenCall(),
    "async generator __call__": AgenCall(),
    "partial of a generator": functools.partial(gen),
    "partial of an async generator": functools.partial(functools.partial(agen)),
}


def _snapshot(r: redis.Redis) -> dict[bytes, Any]:
    return {key: r.dump(key) for key in r.scan_iter()}


@pytest.mark.parametrize("kind", GENERATORS)
async def test_generator_handlers_are_refused_before_any_io(
    r: redis.Redis, queue: WorkQueue, aqueue: AsyncWorkQueue, kind: str
) -> None:
    """B1: calling a generator function runs none of its body; every worker refuses it."""
    queue.add("a", b"x")
    before = _snapshot(r)
    handler: Any = GENERATORS[kind]
    for refuse in (
        lambda: Worker(queue, handler),
        lambda: AsyncWorker(aqueue, handler),
        lambda: drain(queue, handler),
    ):
        with pytest.raises(InvalidType, match="generator function"):
            refuse()
    with pytest.raises(InvalidType, match="generator function"):
        await adrain(aqueue, handler)
    assert _snapshot(r) == before


def test_a_sync_handler_that_returns_a_generator_fails_its_item(r: redis.Redis, queue: WorkQueue) -> None:
    """B1 at run time: a plain function returning a generator fails its item (never completed)."""
    queue.add("a", b"x")
    ran: list[str] = []

    def body(job: Job) -> Iterator[None]:
        ran.append(job.id)
        yield

    def wrapper(job: Job) -> object:
        return body(job)

    stats = drain(queue, wrapper, retry=ONE_ATTEMPT, raise_errors=False)
    assert (stats.completed, stats.failed) == (0, 1)
    assert ran == []
    dead = queue.dead_item("a")
    assert dead is not None
    assert dead.reason.startswith("InvalidType: handler")


async def test_an_async_handler_that_returns_a_coroutine_fails_its_item(
    aqueue: AsyncWorkQueue, recwarn: pytest.WarningsRecorder
) -> None:
    """B1b: ``return process(job)`` in an async def: the inner coroutine is closed, never run,
    and the item fails as an InvalidType, never completed."""
    await aqueue.add("a", b"x")
    ran: list[str] = []

    async def process(job: AsyncJob) -> None:
        ran.append(job.id)

    async def handle(job: AsyncJob) -> object:
        return process(job)

    stats = await adrain(aqueue, handle, retry=ONE_ATTEMPT, raise_errors=False)
    assert (stats.completed, stats.failed) == (0, 1)
    assert ran == []
    dead = await aqueue.dead_item("a")
    assert dead is not None
    assert dead.reason.startswith("InvalidType: handler")
    assert not [w for w in recwarn if "never awaited" in str(w.message)]


class Runs:
    """Counts a handler's runs of each id, and the most at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: Counter[str] = Counter()
        self.most: Counter[str] = Counter()
        self.starts: Counter[str] = Counter()

    def start(self, item_id: str) -> None:
        with self.lock:
            self.running[item_id] += 1
            self.starts[item_id] += 1
            self.most[item_id] = max(self.most[item_id], self.running[item_id])

    def end(self, item_id: str) -> None:
        with self.lock:
            self.running[item_id] -= 1


def _lose_the_lease(r: redis.Redis, queue: WorkQueue, runs: Runs) -> None:
    """Once the first run started: its lease expires (as after a stall), a renewal finds it
    lost, and a light clean requeues the item, so that another slot leases it."""
    deadline = time.monotonic() + 5
    while runs.starts["a"] == 0:
        assert time.monotonic() < deadline, "the handler never started"
        time.sleep(0.01)
    r.delete(f"{queue.prefix}:lease:a")
    time.sleep(0.5)  # a renewal (every 333 ms) finds it lost
    assert queue.light_clean().requeued == ("a",)


def _wait(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def test_a_lost_lease_never_runs_an_item_twice_at_once_in_one_worker(
    r: redis.Redis, queue: WorkQueue
) -> None:
    """B3: the second slot that leases the requeued item holds it until the first run returns,
    then runs it; the first run's settle finds its lease lost."""
    queue.add("a", b"x")
    runs = Runs()

    def slow(job: Job) -> None:
        runs.start(job.id)
        time.sleep(1.2)
        runs.end(job.id)

    worker = Worker(queue, slow, concurrency=2, lease_ms=1_000, clean_interval_ms=None, retry=None)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        _lose_the_lease(r, queue, runs)
        _wait(lambda: worker.stats.completed == 1)
    finally:
        worker.stop()
        thread.join(10)
    assert not thread.is_alive()
    assert runs.starts["a"] == 2
    assert runs.most["a"] == 1, f"item 'a' ran {runs.most['a']} times at once"
    assert worker.stats == WorkerStats(completed=1, lost=1)
    assert queue.counts() == Counts(0, 0)


async def test_a_lost_lease_never_runs_an_item_twice_at_once_in_one_async_worker(
    r: redis.Redis, queue: WorkQueue, aqueue: AsyncWorkQueue
) -> None:
    """B3 for AsyncWorker."""
    await aqueue.add("a", b"x")
    runs = Runs()

    async def slow(job: AsyncJob) -> None:
        runs.start(job.id)
        await asyncio.sleep(1.2)
        runs.end(job.id)

    worker = AsyncWorker(aqueue, slow, concurrency=2, lease_ms=1_000, clean_interval_ms=None, retry=None)
    running = asyncio.ensure_future(worker.run())
    try:
        await asyncio.to_thread(_lose_the_lease, r, queue, runs)
        await asyncio.to_thread(_wait, lambda: worker.stats.completed == 1)
    finally:
        worker.stop()
        await asyncio.wait_for(running, 10)
    assert runs.starts["a"] == 2
    assert runs.most["a"] == 1, f"item 'a' ran {runs.most['a']} times at once"
    assert worker.stats == WorkerStats(completed=1, lost=1)
    assert queue.counts() == Counts(0, 0)


class BadStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str for you")


def test_failure_reason_and_detail_never_raise() -> None:
    """B5: an exception whose ``str()`` fails gives its type name and a note."""
    with pytest.raises(BadStr) as raised:
        raise BadStr
    assert failure_reason(raised.value) == "BadStr: <str() of the exception failed: RuntimeError>"
    assert "BadStr" in failure_detail(raised.value)


def test_an_exception_that_cannot_be_printed_fails_its_item_and_dies(queue: WorkQueue) -> None:
    """B5: the worker survives it and goes on to the next item; the attempt counts (dead)."""
    queue.add_many([("a", b"x"), ("b", b"x")])
    runs: list[str] = []

    def handle(job: Job) -> None:
        runs.append(job.id)
        raise BadStr

    stats = drain(queue, handle, retry=ONE_ATTEMPT, raise_errors=False)
    assert stats == WorkerStats(failed=2)
    assert sorted(runs) == ["a", "b"]
    for item_id in ("a", "b"):
        dead = queue.dead_item(item_id)
        assert dead is not None
        assert dead.reason == "BadStr: <str() of the exception failed: RuntimeError>"


def test_a_base_exception_fails_its_item_then_stops_the_worker(queue: WorkQueue) -> None:
    """B5b: SystemExit stops the worker and run() re-raises it, but the handler failed: its item
    uses an attempt (here its only one: dead), never given back with a refund."""
    queue.add("a", b"x")

    def handle(job: Job) -> None:
        raise SystemExit(3)

    worker = Worker(queue, handle, retry=ONE_ATTEMPT, poll_timeout_ms=100, shutdown_grace_ms=0)
    watchdog = threading.Timer(10, worker.halt)  # ends a run() that wrongly keeps going
    watchdog.start()
    with pytest.raises(SystemExit):
        worker.run()
    watchdog.cancel()
    assert worker.stats == WorkerStats(failed=1)
    dead = queue.dead_item("a")
    assert dead is not None
    assert dead.reason == "SystemExit: 3"


@pytest.mark.parametrize("timeout_ms", [None, 5_000])
async def test_a_base_exception_fails_its_item_then_stops_the_async_worker(
    aqueue: AsyncWorkQueue, timeout_ms: int | None
) -> None:
    """B5b for AsyncWorker, with or without a timeout (wait_for runs the handler in a task of its
    own, which a SystemExit must not leave: it would end the event loop). run() is awaited
    directly here for the same reason."""
    await aqueue.add("a", b"x")

    async def handle(job: AsyncJob) -> None:
        raise SystemExit(3)

    worker = AsyncWorker(
        aqueue, handle, retry=ONE_ATTEMPT, poll_timeout_ms=100, shutdown_grace_ms=0, timeout_ms=timeout_ms
    )
    watchdog = asyncio.get_running_loop().call_later(10, worker.halt)  # a run() that keeps going
    with pytest.raises(SystemExit):
        await worker.run()
    watchdog.cancel()
    assert worker.stats == WorkerStats(failed=1)
    dead = await aqueue.dead_item("a")
    assert dead is not None
    assert dead.reason == "SystemExit: 3"


def _retry_at_once(runs: list[float]) -> Callable[[Job], None]:
    def handle(job: Job) -> None:
        runs.append(time.monotonic())
        raise RetryLater(0)

    return handle


def test_retry_later_zero_without_a_policy_never_loops_hot(
    queue: WorkQueue, caplog: pytest.LogCaptureFixture
) -> None:
    """B5c, RWQ-WORKER-002: on a queue that had no policy at start, RetryLater(0) waits the 1 s
    fallback: in 2.5 s the item runs at most 3 times, and the worker says so once."""
    queue.add("a", b"x")
    runs: list[float] = []
    worker = Worker(queue, _retry_at_once(runs), retry=None, poll_timeout_ms=100)
    thread = threading.Thread(target=worker.run, daemon=True)
    with caplog.at_level(logging.WARNING, logger="rwq.worker"):
        thread.start()
        time.sleep(2.5)
        worker.stop()
        thread.join(10)
    assert not thread.is_alive()
    assert 2 <= len(runs) <= 3, f"{len(runs)} runs in 2.5 s"
    assert all(b - a >= FALLBACK_DELAY_MS / 1000 * 0.9 for a, b in itertools.pairwise(runs))
    raised = [rec for rec in caplog.records if "RetryLater delay" in rec.getMessage()]
    assert len(raised) == 1
    assert "RWQ-WORKER-002" in raised[0].getMessage()


def test_retry_later_zero_with_a_policy_is_honoured(queue: WorkQueue) -> None:
    """B5c: with a policy, its attempts bound the retries, and the delay asked for applies."""
    queue.add("a", b"x")
    runs: list[float] = []
    stats = drain(queue, _retry_at_once(runs), retry=RetryPolicy(max_attempts=4), raise_errors=False)
    assert stats.failed == 4
    assert runs[-1] - runs[0] < FALLBACK_DELAY_MS / 1000
    assert queue.counts().dead == 1


async def test_retry_later_zero_without_a_policy_never_loops_hot_in_an_async_worker(
    aqueue: AsyncWorkQueue,
) -> None:
    """B5c for AsyncWorker."""
    await aqueue.add("a", b"x")
    runs: list[float] = []

    async def handle(job: AsyncJob) -> None:
        runs.append(time.monotonic())
        raise RetryLater(0)

    worker = AsyncWorker(aqueue, handle, retry=None, poll_timeout_ms=100)
    running = asyncio.ensure_future(worker.run())
    await asyncio.sleep(2.5)
    worker.stop()
    await asyncio.wait_for(running, 10)
    assert 2 <= len(runs) <= 3, f"{len(runs)} runs in 2.5 s"
