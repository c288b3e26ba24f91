"""The asyncio worker helper against a real Redis: concurrency, renewal, lost leases, shutdown, faults."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from rwq import AsyncWorkQueue, Counts, Lease, Outcome
from rwq.aio_worker import AsyncJob, AsyncWorker
from rwq.conformance.redis_server import RedisServer
from rwq.worker import WorkerStats


async def wait_until(condition: Callable[[], bool | Awaitable[bool]], timeout: float = 5.0) -> None:
    """Poll ``condition`` until it holds; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        held = condition()
        if inspect.isawaitable(held):
            held = await held
        if held:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout} s")
        await asyncio.sleep(0.01)


@contextlib.asynccontextmanager
async def running(worker: AsyncWorker, timeout: float = 10.0) -> AsyncIterator[None]:
    """Run the worker in a task for the ``async with`` block, then stop it and await run()."""
    task = asyncio.create_task(worker.run())
    try:
        yield
    finally:
        worker.stop()
        await asyncio.wait_for(task, timeout)


async def is_counts(queue: AsyncWorkQueue, queued: int, processing: int) -> bool:
    return await queue.counts() == Counts(queued, processing)


async def blocked(r: aioredis.Redis, name: str, count: int) -> bool:
    """Whether ``count`` connections of the client called ``name`` wait in a blocking command."""
    clients = await r.client_list()
    return sum(1 for client in clients if client["name"] == name and "b" in client["flags"]) == count


async def llen_is(r: aioredis.Redis, key: str, count: int) -> bool:
    return await r.llen(key) == count


async def kill_connections(r: aioredis.Redis, name: str) -> int:
    """CLIENT KILL every connection of the client called ``name``."""
    ids = [client["id"] for client in await r.client_list() if client["name"] == name]
    return sum([await r.client_kill_filter(_id=client_id) for client_id in ids])


async def test_processes_every_item_exactly_once_with_concurrency_4(
    ar: aioredis.Redis, aqueue: AsyncWorkQueue
) -> None:
    ids = [f"item-{n}" for n in range(40)]
    await aqueue.add_many((item_id, item_id.encode()) for item_id in ids)
    seen: list[str] = []
    active, peak = 0, 0

    async def handle(job: AsyncJob) -> None:
        nonlocal active, peak
        assert job.data == job.id.encode()
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.02)
        active -= 1
        seen.append(job.id)

    worker = AsyncWorker(aqueue, handle, concurrency=4, lease_ms=5_000, poll_timeout_ms=200)
    async with running(worker):
        await wait_until(lambda: worker.stats.completed == len(ids))
    assert sorted(seen) == sorted(ids)
    assert peak == 4
    assert worker.stats == WorkerStats(completed=40)
    assert await aqueue.counts() == Counts(0, 0)
    # The default retry policy stays, and the pace of the cleans (a key with a TTL).
    left = set(await ar.keys(f"{aqueue.prefix}:*")) - {f"{aqueue.prefix}:cleaned".encode()}
    assert left == {aqueue.keys.policy}


class CountingQueue(AsyncWorkQueue):
    """Counts complete_and_lease calls; ``after_next`` runs after each."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.next_calls = 0
        self.after_next: Callable[[], object] = lambda: None

    async def complete_and_lease(
        self, item: Lease | str, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[Outcome, Lease | None]:
        self.next_calls += 1
        result = await super().complete_and_lease(item, lease_ms, require_lease=require_lease)
        self.after_next()
        await asyncio.sleep(0)  # stop() takes effect on the loop's next turn
        return result


async def test_each_success_completes_and_leases_the_next_in_one_call(
    ar: aioredis.Redis, aqueue: AsyncWorkQueue
) -> None:
    counting = CountingQueue(ar, aqueue.prefix)
    await counting.add_many([("a", b""), ("b", b""), ("c", b"")])
    seen: list[str] = []

    async def handle(job: AsyncJob) -> None:
        seen.append(job.id)

    worker = AsyncWorker(counting, handle, lease_ms=5_000, poll_timeout_ms=100)
    counting.after_next = lambda: worker.stop() if counting.next_calls == 2 else None
    async with running(worker):
        await wait_until(lambda: worker.stats.completed == 2)
    assert seen == ["a", "b"]  # "c", leased with b's completion as the worker stopped, never ran
    assert counting.next_calls == 2
    assert worker.stats == WorkerStats(completed=2, released=1)
    assert await aqueue.counts() == Counts(1, 0)


async def test_handler_error_releases_the_item_and_a_later_attempt_completes_it(
    aqueue: AsyncWorkQueue, caplog: pytest.LogCaptureFixture
) -> None:
    await aqueue.add("x", b"X")
    tokens: list[str] = []
    reported: list[tuple[str, BaseException]] = []

    async def handle(job: AsyncJob) -> None:
        tokens.append(job.lease.token)
        if len(tokens) == 1:
            raise RuntimeError("boom")

    worker = AsyncWorker(
        aqueue,
        handle,
        lease_ms=5_000,
        poll_timeout_ms=200,
        on_error=lambda job, exc: reported.append((job.id, exc)),
    )
    async with running(worker):
        await wait_until(lambda: worker.stats.completed == 1)
    assert len(set(tokens)) == len(tokens) == 2
    assert worker.stats == WorkerStats(completed=1, failed=1)
    assert [(item_id, str(exc)) for item_id, exc in reported] == [("x", "boom")]
    failures = [rec for rec in caplog.records if rec.levelno == logging.ERROR and rec.exc_info]
    assert [rec.getMessage() for rec in failures] == ["item 'x': handler failed; recording a failed attempt"]
    assert await aqueue.counts() == Counts(0, 0)


async def test_renewal_keeps_a_job_longer_than_its_lease_owned(
    ar: aioredis.Redis, aqueue: AsyncWorkQueue, redis_server: RedisServer
) -> None:
    await aqueue.add("slow", b"")
    calls: list[str] = []

    async def handle(job: AsyncJob) -> None:
        calls.append(job.id)
        await asyncio.sleep(1.5)

    # Five renewals per lease time: a renewal late by a loaded machine still keeps it.
    worker = AsyncWorker(aqueue, handle, lease_ms=500, renew_interval_ms=100, poll_timeout_ms=200)
    other_client = aioredis.Redis(port=redis_server.port)
    other = AsyncWorkQueue(other_client, aqueue.prefix)
    requeued: list[str] = []
    async with running(worker):
        await wait_until(lambda: calls == ["slow"])
        while worker.stats.completed == 0:
            requeued += (await other.light_clean()).requeued
            assert await other.lease(500) is None
            assert await ar.pttl(f"{aqueue.prefix}:lease:slow") > 0 or worker.stats.completed
            await asyncio.sleep(0.05)
    await other_client.aclose()
    assert requeued == []
    assert calls == ["slow"]
    assert worker.stats == WorkerStats(completed=1)


async def test_a_lease_taken_over_is_reported_lost_and_not_completed(
    ar: aioredis.Redis, aqueue: AsyncWorkQueue, redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    await aqueue.add("x", b"X")
    started = asyncio.Event()
    noticed: list[bool] = []

    async def handle(job: AsyncJob) -> None:
        started.set()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(job.lost.wait(), 5)
        noticed.append(job.lost.is_set())

    worker = AsyncWorker(aqueue, handle, lease_ms=1_000, renew_interval_ms=100, poll_timeout_ms=200)
    other_client = aioredis.Redis(port=redis_server.port)
    other = AsyncWorkQueue(other_client, aqueue.prefix)
    async with running(worker):
        await asyncio.wait_for(started.wait(), 5)
        await ar.delete(f"{aqueue.prefix}:lease:x")  # the lease "expires"; another client takes over
        assert (await other.light_clean()).requeued == ("x",)
        theirs = await other.lease(5_000)
        assert theirs is not None
        assert theirs.id == "x"
        await wait_until(lambda: worker.stats.lost == 1)
    assert noticed == [True]
    assert worker.stats == WorkerStats(lost=1)
    assert any("lease lost" in rec.getMessage() for rec in caplog.records)
    assert await other.complete(theirs, require_lease=True)  # the new holder still owns it
    await other_client.aclose()


async def test_stop_lets_running_handlers_finish_within_the_grace_period(aqueue: AsyncWorkQueue) -> None:
    await aqueue.add_many((f"i{n}", b"") for n in range(4))
    started: list[str] = []

    async def handle(job: AsyncJob) -> None:
        started.append(job.id)
        await asyncio.sleep(0.3)

    worker = AsyncWorker(
        aqueue, handle, concurrency=2, lease_ms=5_000, poll_timeout_ms=200, shutdown_grace_ms=5_000
    )
    async with running(worker):
        await wait_until(lambda: len(started) == 2)
    assert len(started) == 2
    assert worker.stats == WorkerStats(completed=2)
    assert await aqueue.counts() == Counts(2, 0)


async def test_stop_cancels_and_releases_what_is_still_running_after_the_grace_period(
    ar: aioredis.Redis, aqueue: AsyncWorkQueue
) -> None:
    await aqueue.add_many((f"i{n}", b"") for n in range(5))
    started: list[AsyncJob] = []
    cancelled: list[AsyncJob] = []

    async def handle(job: AsyncJob) -> None:
        started.append(job)
        try:
            await asyncio.sleep(30)  # ignores job.lost
        except asyncio.CancelledError:
            cancelled.append(job)
            raise

    worker = AsyncWorker(
        aqueue, handle, concurrency=3, lease_ms=5_000, poll_timeout_ms=200, shutdown_grace_ms=200
    )
    async with running(worker):
        await wait_until(lambda: len(started) == 3)
        stopped_at = time.monotonic()
        worker.stop()
    assert time.monotonic() - stopped_at < 1.5
    assert cancelled == started
    assert all(job.lost.is_set() for job in started)
    assert worker.stats == WorkerStats(released=3)
    assert await aqueue.counts() == Counts(5, 0)
    assert [key async for key in ar.scan_iter(match=f"{aqueue.prefix}:lease:*")] == []


async def test_an_item_leased_as_the_worker_stops_is_given_back_unrun(
    ar: aioredis.Redis, aqueue: AsyncWorkQueue, redis_server: RedisServer
) -> None:
    calls: list[str] = []

    async def handle(job: AsyncJob) -> None:
        calls.append(job.id)

    worker_client = aioredis.Redis(port=redis_server.port, client_name="late-worker")
    worker = AsyncWorker(
        AsyncWorkQueue(worker_client, aqueue.prefix), handle, lease_ms=5_000, poll_timeout_ms=3_000
    )
    async with running(worker):
        await wait_until(lambda: blocked(ar, "late-worker", 1))
        worker.stop()
        await aqueue.add("late", b"")  # the slot's pending blocking lease takes it after stop()
    await worker_client.aclose()
    assert calls == []
    assert worker.stats == WorkerStats(released=1)
    assert await aqueue.counts() == Counts(1, 0)


async def test_cancelling_run_shuts_down_gracefully(aqueue: AsyncWorkQueue) -> None:
    await aqueue.add_many((f"i{n}", b"") for n in range(3))
    started: list[str] = []

    async def handle(job: AsyncJob) -> None:
        started.append(job.id)
        await asyncio.sleep(0.2)

    worker = AsyncWorker(aqueue, handle, lease_ms=5_000, poll_timeout_ms=200, shutdown_grace_ms=5_000)
    task = asyncio.create_task(worker.run())
    await wait_until(lambda: len(started) == 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    assert worker.stats == WorkerStats(completed=1)
    assert await aqueue.counts() == Counts(2, 0)


async def test_recovers_from_killed_connections_and_finishes(
    ar: aioredis.Redis, aqueue: AsyncWorkQueue, redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    worker_client = aioredis.Redis(port=redis_server.port, client_name="kill-me", retry=Retry(NoBackoff(), 0))
    handled: set[str] = set()

    async def handle(job: AsyncJob) -> None:
        await asyncio.sleep(0.01)
        handled.add(job.id)

    worker = AsyncWorker(
        AsyncWorkQueue(worker_client, aqueue.prefix),
        handle,
        concurrency=4,
        lease_ms=1_000,
        renew_interval_ms=100,
        poll_timeout_ms=500,
        clean_interval_ms=200,
    )
    ids = {f"item-{n}" for n in range(30)}
    async with running(worker):
        await wait_until(lambda: blocked(ar, "kill-me", 4))
        assert await kill_connections(ar, "kill-me") >= 4
        await aqueue.add_many((item_id, b"") for item_id in sorted(ids))
        for _ in range(3):
            await asyncio.sleep(0.05)
            await kill_connections(ar, "kill-me")
        await wait_until(lambda: handled == ids, timeout=15)
        await wait_until(lambda: is_counts(aqueue, 0, 0), timeout=15)
    await worker_client.aclose()
    assert any("lease failed" in rec.getMessage() for rec in caplog.records)
    # The default retry policy stays, and the pace of the cleans (a key with a TTL).
    left = set(await ar.keys(f"{aqueue.prefix}:*")) - {f"{aqueue.prefix}:cleaned".encode()}
    assert left == {aqueue.keys.policy}


WORKER_PROCESS = """
import asyncio, dataclasses, json, sys
import redis.asyncio
from rwq import AsyncWorkQueue
from rwq.aio_worker import AsyncWorker

cancelled = []
client = redis.asyncio.Redis(port=int(sys.argv[1]))

async def handle(job):
    await client.rpush(sys.argv[3], job.id)  # tells the test this handler runs
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        cancelled.append(job.id)
        raise

async def main():
    queue = AsyncWorkQueue(client, sys.argv[2])
    worker = AsyncWorker(
        queue, handle, concurrency=3, lease_ms=10_000, poll_timeout_ms=200, shutdown_grace_ms=300
    )
    with worker.install_signal_handlers():
        await worker.run()
    await client.aclose()
    print(json.dumps({**dataclasses.asdict(worker.stats), "cancelled": len(cancelled)}))

asyncio.run(main())
"""


async def test_sigterm_shuts_a_worker_process_down_and_releases_its_items(
    ar: aioredis.Redis, aqueue: AsyncWorkQueue, redis_server: RedisServer
) -> None:
    await aqueue.add_many((f"i{n}", b"") for n in range(5))
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        WORKER_PROCESS,
        str(redis_server.port),
        aqueue.prefix,
        "started",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        await wait_until(lambda: llen_is(ar, "started", 3), timeout=15)
        assert await aqueue.counts() == Counts(2, 3)
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(process.communicate(), 10)
        elapsed = time.monotonic() - signalled
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, err.decode()
    assert elapsed < 2.5
    assert json.loads(out) == {"completed": 0, "failed": 0, "released": 3, "lost": 0, "cancelled": 3}
    assert await aqueue.counts() == Counts(5, 0)
    assert [key async for key in ar.scan_iter(match=f"{aqueue.prefix}:lease:*")] == []
