"""The workers are safe by default (issue #13): a failing handler backs off and ends in the dead set
whether or not the queue had a retry policy, and a SIGKILLed worker's item runs again within the
documented bound, with nothing configured but a short lease."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import redis

from rwq import AsyncJob, AsyncWorker, AsyncWorkQueue, Job, RetryPolicy, Worker, WorkerHealth, WorkQueue
from rwq.worker import DEFAULT_RETRY

RUN_S = 3.0


def _run_for(worker: Worker, seconds: float) -> None:
    thread = threading.Thread(target=worker.run)
    thread.start()
    time.sleep(seconds)
    worker.stop()
    thread.join(30)
    assert not thread.is_alive()


def _wait_until(condition: Callable[[], bool], timeout_s: float) -> float:
    """Seconds until ``condition`` held; fails after ``timeout_s``."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout_s, "timed out"
        time.sleep(0.01)
    return time.monotonic() - started


def test_a_failing_handler_backs_off_by_default(r: redis.Redis, queue: WorkQueue) -> None:
    calls: list[float] = []

    def fails(job: Job) -> None:
        calls.append(time.monotonic())
        raise RuntimeError("downstream is down")

    queue.add("a", b"x")
    _run_for(Worker(queue, fails), RUN_S)
    # 1 s, then 2 s (each shortened by up to 25 %): 2 or 3 calls in 3 s, not thousands.
    assert 2 <= len(calls) <= 3, calls
    assert calls[1] - calls[0] >= 0.7
    assert queue.retry_policy() == DEFAULT_RETRY
    counts = queue.counts()
    # Waiting out its backoff, or just due (a clean may promote it as the worker stops): not
    # held, not dead.
    assert (counts.queued + counts.delayed, counts.processing, counts.dead) == (1, 0, 0)


def test_a_failing_item_ends_in_the_dead_set_with_its_exception(queue: WorkQueue) -> None:
    fast = RetryPolicy(max_attempts=3, backoff="fixed", base_ms=20)

    def fails(job: Job) -> None:
        raise ValueError(f"bad payload in {job.id}")

    queue.add("a", b"x")
    worker = Worker(queue, fails, retry=fast, poll_timeout_ms=50)
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        _wait_until(lambda: queue.counts().dead == 1, 10)
    finally:
        worker.stop()
        thread.join(30)
    dead = queue.dead_item("a")
    assert dead is not None
    assert dead.attempts == 3
    assert "ValueError" in dead.reason
    assert "bad payload in a" in dead.reason
    assert worker.stats.failed == 3


def test_an_operators_policy_is_never_replaced(queue: WorkQueue) -> None:
    mine = RetryPolicy(max_attempts=1, backoff="fixed", base_ms=0)
    queue.set_retry_policy(mine)
    _run_for(Worker(queue, lambda job: None), 0.2)
    assert queue.retry_policy() == mine


def test_retry_none_stores_no_policy(queue: WorkQueue) -> None:
    _run_for(Worker(queue, lambda job: None, retry=None), 0.2)
    assert queue.retry_policy() is None


async def test_the_async_worker_backs_off_by_default(aqueue: AsyncWorkQueue) -> None:
    calls: list[float] = []

    async def fails(job: AsyncJob) -> None:
        calls.append(time.monotonic())
        raise RuntimeError("downstream is down")

    await aqueue.add("a", b"x")
    worker = AsyncWorker(aqueue, fails)
    task = asyncio.create_task(worker.run())
    await asyncio.sleep(RUN_S)
    worker.stop()
    await asyncio.wait_for(task, 30)
    assert 2 <= len(calls) <= 3, calls
    assert await aqueue.retry_policy() == DEFAULT_RETRY


CRASHING_WORKER = """
import sys, time, redis
from rwq import Worker, WorkQueue

r = redis.Redis(port=int(sys.argv[1]))
def hangs(job):
    r.rpush("runs", job.id)
    time.sleep(600)
Worker(WorkQueue(r, sys.argv[2]), hangs, lease_ms=int(sys.argv[3])).run()
"""


def test_a_sigkilled_workers_item_runs_again_within_the_bound(r: redis.Redis, queue: WorkQueue) -> None:
    """Nothing configured but the lease time: the bound is about 2.25 lease times plus a poll."""
    lease_ms = 1000
    port = r.connection_pool.connection_kwargs["port"]
    queue.add("a", b"x")
    crashing = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(CRASHING_WORKER), str(port), queue.prefix, str(lease_ms)]
    )
    try:
        _wait_until(lambda: r.llen("runs") == 1, 20)
    finally:
        os.kill(crashing.pid, signal.SIGKILL)
        crashing.wait(10)
    killed_at = time.monotonic()
    ran = threading.Event()
    attempts: list[int] = []

    def works(job: Job) -> None:
        attempts.append(job.lease.attempt)
        ran.set()

    worker = Worker(queue, works, lease_ms=lease_ms)
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        assert ran.wait(20)
        recovered_s = time.monotonic() - killed_at
    finally:
        worker.stop()
        thread.join(30)
    bound_s = (2.25 * lease_ms + worker.poll_timeout_ms) / 1000
    assert recovered_s <= bound_s + 0.5, f"recovered after {recovered_s:.2f} s, bound {bound_s:.2f} s"
    assert attempts == [2]  # the crashed run counted: a crash loop would end in the dead set
    assert queue.counts().processing == 0


def test_a_handler_past_its_timeout_fails_its_item(queue: WorkQueue) -> None:
    """The thread cannot be killed: its item is failed (retried later), its late result ignored."""
    release = threading.Event()
    started: list[str] = []

    def hangs(job: Job) -> None:
        started.append(job.id)
        release.wait(10)
        assert job.lost.is_set()  # told to stop

    queue.add("a", b"x")
    worker = Worker(queue, hangs, timeout_ms=300, retry=RetryPolicy(max_attempts=5, base_ms=60_000))
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        # failed: waiting out its backoff (the worker counts the failure once its fail call returned)
        _wait_until(lambda: queue.counts().delayed == 1 and worker.stats.failed == 1, 10)
    finally:
        release.set()
        worker.stop()
        thread.join(30)
    assert started == ["a"]
    assert worker.stats.completed == 0  # the late return completed nothing
    assert queue.counts().delayed == 1


async def test_an_async_handler_past_its_timeout_is_cancelled(aqueue: AsyncWorkQueue) -> None:
    cancelled = asyncio.Event()

    async def hangs(job: AsyncJob) -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    await aqueue.add("a", b"x")
    worker = AsyncWorker(aqueue, hangs, timeout_ms=200, retry=RetryPolicy(max_attempts=1))
    task = asyncio.create_task(worker.run())
    await asyncio.wait_for(cancelled.wait(), 10)
    deadline = time.monotonic() + 10
    while (await aqueue.counts()).dead != 1:  # one attempt: the timeout dead-letters it
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    worker.stop()
    await asyncio.wait_for(task, 30)
    dead = await aqueue.dead_item("a")
    assert dead is not None
    assert dead.reason == "TimeoutError: the handler ran longer than 200 ms"
    assert worker.stats.failed == 1


def test_liveness_for_a_probe(queue: WorkQueue, tmp_path: Path) -> None:
    alive = tmp_path / "alive"
    holding = threading.Event()
    release = threading.Event()

    def handle(job: Job) -> None:
        holding.set()
        release.wait(10)

    worker = Worker(queue, handle, poll_timeout_ms=100, liveness_file=alive)
    assert worker.health() == WorkerHealth(None, 0, False)  # not started: never talked to Redis
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        _wait_until(alive.exists, 10)
        first = alive.stat().st_mtime_ns
        _wait_until(lambda: alive.stat().st_mtime_ns > first, 10)  # touched again at each poll
        health = worker.health()
        assert health.redis_age_s is not None
        assert health.redis_age_s < 1
        assert health.in_hand == 0
        queue.add("a", b"x")
        assert holding.wait(10)
        assert worker.health().in_hand == 1
    finally:
        release.set()
        worker.stop()
        thread.join(30)
    assert worker.health().stopping


def test_the_workers_cleans_are_paced(r: redis.Redis, queue: WorkQueue) -> None:
    """Each worker tries a clean about once per interval, paced at three quarters of it: the fleet
    walks the processing list about once per interval, however many workers it has."""
    workers = [Worker(queue, lambda job: None, lease_ms=2000, clean_interval_ms=400) for _ in range(3)]
    threads = [threading.Thread(target=worker.run) for worker in workers]
    for thread in threads:
        thread.start()
    try:
        _wait_until(lambda: r.exists(f"{queue.prefix}:cleaned") == 1, 10)
        assert 0 < r.pttl(f"{queue.prefix}:cleaned") <= 300
    finally:
        for worker in workers:
            worker.stop()
        for thread in threads:
            thread.join(30)
