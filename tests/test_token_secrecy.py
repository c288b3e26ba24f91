"""Tokens stay secret (RWQ-SEC-003): no lease token in any repr, str, log line or error message.

Every token the client issues is recorded (``new_token`` is wrapped); then a full worker run
(handlers that return, raise and lose their lease) and every client operation on leases run with
all logging captured, and each repr, str, log line and exception message is searched for them.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import traceback

import pytest
import redis

from rwq import (
    AsyncJob,
    AsyncWorker,
    AsyncWorkQueue,
    Job,
    Lease,
    LeaseLost,
    RetryPolicy,
    RwqError,
    Worker,
    WorkerStats,
    WorkQueue,
)
from rwq.protocol import operations as ops

ISSUED: list[str] = []


@pytest.fixture(autouse=True)
def recorded_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    real = ops.new_token

    def recording() -> str:
        token = real()
        ISSUED.append(token)
        return token

    ISSUED.clear()
    monkeypatch.setattr(ops, "new_token", recording)


def leaks(texts: list[str]) -> list[str]:
    """The texts that contain an issued token."""
    assert ISSUED, "no token was issued: the check would prove nothing"
    return [text for text in texts if any(token in text for token in ISSUED)]


def described(*objects: object) -> list[str]:
    return [text for obj in objects for text in (repr(obj), str(obj), f"{obj}", f"{obj!r}")]


def error_texts(exc: BaseException) -> list[str]:
    return [repr(exc), str(exc), "".join(traceback.format_exception(exc))]


def test_the_check_can_fail() -> None:
    ISSUED.append("secret-token")
    assert leaks([repr(("Lease", "secret-token"))])


def test_client_operations(queue: WorkQueue, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    queue.add_many([(f"i{n}", b"x") for n in range(6)])
    first = queue.lease(60_000)
    assert first is not None
    assert first.token in ISSUED  # the recording sees the real tokens
    many = queue.lease_many(count=3, lease_ms=60_000)
    texts += described(first, many, [first], {"lease": first})
    texts += described(queue.renew(first, 60_000), queue.renew_many(many, 60_000))
    outcome, following = queue.complete_and_lease(first, 60_000, require_lease=True)
    texts += described(outcome, following)
    stale = Lease(first.id, first.data, first.token, first.attempt)
    for call in (
        lambda: queue.complete(stale, require_lease=True),
        lambda: queue.release(stale),
        lambda: queue.fail(stale, "boom"),
        lambda: queue.renew(Lease(many[0].id, b"", many[0].token + "x" * 200), 1000),
        lambda: queue.complete_and_lease_many([stale] * 1001, 1, 1000),
    ):
        try:
            texts += described(call())
        except RwqError as exc:
            texts += error_texts(exc)
    texts += described(queue.release_many(many[:1]), queue.complete_many(many[1:], require_lease=True))
    queue.set_retry_policy(RetryPolicy(max_attempts=1))
    assert following is not None
    texts += described(queue.fail(following, "last"), queue.dead_items())
    texts += [record.getMessage() for record in caplog.records] + [caplog.text]
    assert not leaks(texts)


def test_lease_lost_names_the_item_not_the_token(queue: WorkQueue) -> None:
    queue.add("a", b"A")
    held = queue.lease(1)
    assert held is not None
    queue.complete("a")
    with pytest.raises(LeaseLost) as caught:
        queue.complete(held, require_lease=True)
    assert "'a'" in str(caught.value)
    assert not leaks(error_texts(caught.value))


def test_worker_run(r: redis.Redis, prefix: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    queue = WorkQueue(r, prefix)
    queue.set_retry_policy(RetryPolicy(max_attempts=1))
    queue.add_many([("ok", b""), ("boom", b""), ("lost", b""), ("last", b"")])
    seen: list[str] = []
    done = threading.Event()

    def handle(job: Job) -> None:
        seen.extend(described(job, job.lease))
        if job.id == "boom":
            raise RuntimeError(f"handler failed on {job!r} {job.lease!r}")
        if job.id == "lost":
            r.delete(f"{prefix}:lease:lost")  # the lease is gone: the worker finds it lost
        if len(seen) >= 32:  # four jobs, eight texts each
            done.set()

    worker = Worker(
        queue, handle, lease_ms=3_000, renew_interval_ms=50, poll_timeout_ms=100, shutdown_grace_ms=0
    )
    thread = threading.Thread(target=worker.run)
    thread.start()
    assert done.wait(30)
    worker.stop()
    thread.join(30)
    assert worker.stats == WorkerStats(completed=2, failed=1, lost=1)
    texts = [
        *seen,
        *described(worker.stats),
        caplog.text,
        *(record.getMessage() for record in caplog.records),
    ]
    assert not leaks(texts)


async def test_async_worker_run(aqueue: AsyncWorkQueue, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    await aqueue.set_retry_policy(RetryPolicy(max_attempts=1))
    await aqueue.add_many([("ok", b""), ("boom", b""), ("last", b"")])
    seen: list[str] = []

    async def handle(job: AsyncJob) -> None:
        seen.extend(described(job, job.lease))
        if job.id == "boom":
            raise RuntimeError(f"handler failed on {job!r} {job.lease!r}")
        if len(seen) >= 24:  # three jobs, eight texts each
            worker.stop()

    worker = AsyncWorker(aqueue, handle, lease_ms=3_000, poll_timeout_ms=100, shutdown_grace_ms=0)
    await asyncio.wait_for(worker.run(), 30)
    assert worker.stats == WorkerStats(completed=2, failed=1)
    texts = [
        *seen,
        *described(worker.stats),
        caplog.text,
        *(record.getMessage() for record in caplog.records),
    ]
    assert not leaks(texts)
