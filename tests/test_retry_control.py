"""Retries steered from code (issue 21, problems 3 to 6) on a real Redis: fail's options (dead now,
a delay asked, a fallback without a policy, a detail), release's refund of the attempt, and the
workers that use them."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis

from rwq import (
    AsyncWorkQueue,
    FailOutcome,
    InvalidArgument,
    InvalidType,
    NonRetryable,
    RetryLater,
    RetryPolicy,
    WorkQueue,
)
from rwq.aio_worker import AsyncJob, AsyncWorker
from rwq.protocol.operations import MAX_DETAIL_BYTES
from rwq.protocol.scripts import registry
from rwq.sharded import ShardedWorkQueue
from rwq.worker import Job, Worker, failure_detail
from test_worker import running, wait_until

POLICY = RetryPolicy(max_attempts=3, backoff="fixed", base_ms=0, cap_ms=0)


def leased(queue: WorkQueue | ShardedWorkQueue, item_id: str = "a") -> Any:
    queue.add(item_id, b"x")
    held = queue.lease(30_000)
    assert held is not None
    return held


def snapshot(r: redis.Redis) -> dict[Any, Any]:
    return {key: r.dump(key) for key in sorted(r.keys("*"))}


def info(r: redis.Redis, prefix: str, item_id: str) -> dict[str, Any]:
    raw = r.hget(f"{prefix}:dead:info", item_id)
    assert raw is not None
    return dict(json.loads(raw))


def test_fail_dead_dead_letters_now_with_attempts_left(r: redis.Redis, queue: WorkQueue) -> None:
    """RWQ-RETRY-016, RWQ-RETRY-018: dead=True dead-letters the item on its first attempt,
    and the detail is kept apart from the reason and read back."""
    queue.set_retry_policy(POLICY)
    result = queue.fail(leased(queue), "ValueError: bad", dead=True, detail="Traceback...\nValueError: bad\n")
    assert result.outcome is FailOutcome.DEAD
    assert info(r, queue.prefix, "a") == {
        "reason": "ValueError: bad",
        "attempts": 1,
        "detail": "Traceback...\nValueError: bad\n",
    }
    item = queue.dead_item("a")
    assert item is not None
    assert (item.reason, item.detail, item.data) == (
        "ValueError: bad",
        "Traceback...\nValueError: bad\n",
        b"x",
    )
    assert [dead.detail for dead in queue.dead_items()] == ["Traceback...\nValueError: bad\n"]


def test_fail_dead_without_a_policy_and_no_detail_field_when_empty(r: redis.Redis, queue: WorkQueue) -> None:
    """RWQ-RETRY-016 holds without a policy; an empty detail leaves the info as before."""
    assert queue.fail(leased(queue), "no", dead=True).outcome is FailOutcome.DEAD
    assert info(r, queue.prefix, "a") == {"reason": "no", "attempts": 0}
    item = queue.dead_item("a")
    assert item is not None
    assert item.detail == ""


def test_fail_with_a_delay_retries_after_exactly_it_until_attempts_run_out(
    r: redis.Redis, queue: WorkQueue
) -> None:
    """RWQ-RETRY-017: the delay asked replaces the backoff (no jitter), and the attempt limit holds."""
    queue.set_retry_policy(RetryPolicy(max_attempts=2, backoff="fixed", base_ms=5, jitter_pct=100))
    result = queue.fail(leased(queue), "later", delay_ms=600_000)
    assert (result.outcome, result.delay_ms) == (FailOutcome.RETRY, 600_000)
    due = r.zscore(f"{queue.prefix}:delayed", "a")
    seconds, micros = r.time()
    assert due is not None
    assert 599_000 < due - (seconds * 1000 + micros // 1000) <= 600_000
    r.zadd(f"{queue.prefix}:delayed", {"a": 0})  # due now
    again = queue.lease(30_000)
    assert again is not None
    assert again.attempt == 2
    assert queue.fail(again, "later", delay_ms=600_000).outcome is FailOutcome.DEAD


def test_the_fallback_applies_only_without_a_policy(r: redis.Redis, queue: WorkQueue) -> None:
    """RWQ-RETRY-019: without a policy the fallback delays the retry; with one, it is ignored;
    0 keeps RWQ-RETRY-006 (at once)."""
    result = queue.fail(leased(queue), "boom", fallback_delay_ms=1000)
    assert (result.outcome, result.delay_ms) == (FailOutcome.RETRY, 1000)
    assert r.zscore(f"{queue.prefix}:delayed", "a") is not None
    queue.set_retry_policy(RetryPolicy(backoff="fixed", base_ms=0, cap_ms=0))
    r.zadd(f"{queue.prefix}:delayed", {"a": 0})
    assert queue.fail(leased(queue, "b"), "boom", fallback_delay_ms=1000).delay_ms == 0
    queue.set_retry_policy(None)
    assert queue.fail(leased(queue, "c"), "boom", fallback_delay_ms=0).delay_ms == 0
    assert b"c" in r.lrange(f"{queue.prefix}:queue", 0, -1)


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"dead": 1}, InvalidType),
        ({"dead": True, "delay_ms": 0}, InvalidArgument),
        ({"delay_ms": True}, InvalidType),
        ({"delay_ms": 1.5}, InvalidType),
        ({"delay_ms": -1}, InvalidArgument),
        ({"delay_ms": 31_536_000_001}, InvalidArgument),
        ({"fallback_delay_ms": False}, InvalidType),
        ({"fallback_delay_ms": "1000"}, InvalidType),
        ({"fallback_delay_ms": -1}, InvalidArgument),
        ({"detail": b"bytes"}, InvalidType),
        ({"detail": "x" * (MAX_DETAIL_BYTES + 1)}, InvalidArgument),
        ({"detail": "é" * (MAX_DETAIL_BYTES // 2 + 1)}, InvalidArgument),
    ],
)
def test_bad_fail_options_are_refused_before_any_io(
    r: redis.Redis, queue: WorkQueue, options: dict[str, Any], error: type[Exception]
) -> None:
    queue.set_retry_policy(POLICY)
    held = leased(queue)
    before = snapshot(r)
    with pytest.raises(error):
        queue.fail(held, "boom", **options)
    with pytest.raises(error):
        ShardedWorkQueue(r, "s", shards=2).fail(held, "boom", **options)
    assert snapshot(r) == before


def test_the_script_refuses_bad_options_before_writing(r: redis.Redis, queue: WorkQueue) -> None:
    """The fail script validates how, delay_ms and detail itself (a port that skips its checks)."""
    held = leased(queue)
    before = snapshot(r)
    script = r.register_script(registry()["fail"].source)
    keys = [f"{queue.prefix}:queue", f"{queue.prefix}:processing"]
    for how, ms, detail in (
        ("later", "0", ""),
        ("delay", "-1", ""),
        ("delay", "1.5", ""),
        ("dead", "5", ""),
        ("backoff", "0", "x" * 8193),
    ):
        with pytest.raises(redis.ResponseError, match="RWQ_INVALID_ARGUMENT"):
            script(keys=keys, args=[held.id, held.token, "r", 0, how, ms, detail])
    with pytest.raises(redis.ResponseError, match="RWQ_INVALID_ARGUMENT"):
        script(keys=keys, args=[held.id, held.token, "r", 0, "dead"])
    assert snapshot(r) == before


def test_release_with_refund_gives_the_attempt_back(r: redis.Redis, queue: WorkQueue) -> None:
    """RWQ-RETRY-020: a refunded release does not use up an attempt; a plain one does; no
    count goes below 0, and nothing is refunded without a policy."""
    queue.set_retry_policy(POLICY)
    held = leased(queue)
    assert held.attempt == 1
    assert queue.release(held, refund_attempt=True)
    assert r.hget(f"{queue.prefix}:attempts", "a") is None
    for _ in range(5):
        again = queue.lease(30_000)
        assert again is not None
        assert again.attempt == 1
        assert queue.release_many([again], refund_attempt=True, delay_ms=0) == [1]
    again = queue.lease(30_000)
    assert again is not None
    assert queue.release(again)
    assert r.hget(f"{queue.prefix}:attempts", "a") == b"1"
    twice = queue.lease(30_000)
    assert twice is not None
    assert twice.attempt == 2
    assert queue.release(twice, delay_ms=10, refund_attempt=True)
    assert r.hget(f"{queue.prefix}:attempts", "a") == b"1"
    queue.set_retry_policy(None)
    r.zadd(f"{queue.prefix}:delayed", {"a": 0})
    plain = queue.lease(30_000)
    assert plain is not None
    assert queue.release(plain, refund_attempt=True)
    assert r.hget(f"{queue.prefix}:attempts", "a") == b"1"  # counted under a policy only
    with pytest.raises(InvalidType):
        queue.release(plain, refund_attempt=1)  # type: ignore[arg-type]


def refund_then_dead(queue: WorkQueue | ShardedWorkQueue) -> None:
    """A release with refund gives the attempt back; a dead fail keeps its detail."""
    queue.set_retry_policy(POLICY)
    held = leased(queue)
    assert queue.release(held, refund_attempt=True)
    again = queue.lease(30_000)
    assert again is not None
    assert again.attempt == 1
    assert queue.fail(again, "no", dead=True, detail="tb").outcome is FailOutcome.DEAD
    item = queue.dead_item("a")
    assert item is not None
    assert item.detail == "tb"


def test_sharded_fail_and_release_pass_the_options(r: redis.Redis) -> None:
    refund_then_dead(ShardedWorkQueue(r, "sh", shards=3))


def test_failure_detail_keeps_the_end_of_a_long_traceback_at_a_character_boundary() -> None:
    def deep() -> None:
        raise ValueError("é" * 10_000 + " the end")

    try:
        deep()
    except ValueError as exc:
        detail = failure_detail(exc)
    raw = detail.encode("utf-8")
    assert len(raw) <= MAX_DETAIL_BYTES
    assert detail.startswith("...\n")
    assert detail.endswith(" the end\n")


def test_worker_handlers_steer_their_retries(r: redis.Redis, queue: WorkQueue) -> None:
    """RetryLater retries after the delay asked; NonRetryable dead-letters now; a plain exception
    follows the policy; a dead item keeps the handler's traceback as its detail."""
    queue.set_retry_policy(POLICY)
    queue.add_many([("later", b""), ("bad", b""), ("boom", b"")])
    seen: list[str] = []

    def handler(job: Job) -> None:
        seen.append(job.id)
        if job.id == "later":
            raise RetryLater(600_000)
        if job.id == "bad":
            try:
                int("x")
            except ValueError as exc:
                raise NonRetryable("malformed payload") from exc
        raise RuntimeError("always")

    worker = Worker(queue, handler, poll_timeout_ms=100)
    with running(worker):
        wait_until(lambda: queue.counts().dead == 2 and queue.counts().delayed == 1)
    assert seen.count("bad") == 1
    assert seen.count("boom") == 3
    assert seen.count("later") == 1
    due = r.zscore(f"{queue.prefix}:delayed", "later")
    seconds, micros = r.time()
    assert due is not None
    assert due - (seconds * 1000 + micros // 1000) > 590_000
    bad = queue.dead_item("bad")
    assert bad is not None
    assert bad.reason == "NonRetryable: malformed payload"
    assert bad.attempts == 1
    assert "ValueError: invalid literal for int()" in bad.detail
    assert "in handler" in bad.detail
    boom = queue.dead_item("boom")
    assert boom is not None
    assert boom.detail.startswith("Traceback (most recent call last):")
    assert boom.detail.endswith("RuntimeError: always\n")


def test_a_worker_with_another_policy_warns_once(queue: WorkQueue, caplog: pytest.LogCaptureFixture) -> None:
    """RWQ-WORKER-003: the stored policy wins; one WARNING names both policies and the command."""
    queue.set_retry_policy(RetryPolicy(max_attempts=5))
    caplog.set_level(logging.INFO, "rwq.worker")
    worker = Worker(queue, lambda job: None, poll_timeout_ms=100, retry=RetryPolicy(max_attempts=2))
    with running(worker):
        pass
    warnings = [rec.getMessage() for rec in caplog.records if rec.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert "max_attempts=5" in warnings[0]
    assert "max_attempts=2" in warnings[0]
    assert f"rwq policy set --prefix {queue.prefix}" in warnings[0]
    assert queue.retry_policy() == RetryPolicy(max_attempts=5)
    caplog.clear()
    with running(Worker(queue, lambda job: None, poll_timeout_ms=100, retry=RetryPolicy(max_attempts=5))):
        pass
    assert not [rec for rec in caplog.records if rec.levelno >= logging.WARNING]


def test_graceful_shutdowns_during_a_long_job_use_up_no_attempts(queue: WorkQueue) -> None:
    """RWQ-WORKER-004: three rolling restarts during a long job, max_attempts=3: the item is
    never dead-lettered, and the fourth worker completes it as attempt 1."""
    queue.set_retry_policy(POLICY)
    queue.add("long", b"")
    attempts: list[int] = []

    def long_job(job: Job) -> None:
        attempts.append(job.lease.attempt)
        job.lost.wait(30)

    def restart() -> None:
        worker = Worker(queue, long_job, poll_timeout_ms=100, shutdown_grace_ms=0)
        with running(worker):
            wait_until(lambda: worker.health().in_hand == 1)
        assert worker.stats.released == 1

    for _ in range(3):
        restart()
    assert queue.counts().dead == 0
    done = Worker(queue, lambda job: attempts.append(job.lease.attempt), poll_timeout_ms=100)
    with running(done):
        wait_until(lambda: done.stats.completed == 1)
    assert attempts == [1, 1, 1, 1]


async def test_the_async_worker_steers_retries_and_refunds_at_shutdown(
    ar: aioredis.Redis, aqueue: AsyncWorkQueue
) -> None:
    await aqueue.set_retry_policy(POLICY)
    await aqueue.add_many([("bad", b""), ("long", b"")])
    attempts: list[int] = []

    async def handler(job: AsyncJob) -> None:
        if job.id == "bad":
            raise NonRetryable("no")
        attempts.append(job.lease.attempt)
        await asyncio.sleep(30)

    for _ in range(3):
        worker = AsyncWorker(aqueue, handler, poll_timeout_ms=100, shutdown_grace_ms=0)
        task = asyncio.create_task(worker.run())
        deadline = time.monotonic() + 10
        while worker.health().in_hand != 1 or (await aqueue.counts()).dead != 1:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
        worker.stop()
        await asyncio.wait_for(task, 30)
    assert attempts == [1, 1, 1]
    bad = await aqueue.dead_item("bad")
    assert bad is not None
    assert bad.detail.endswith("rwq.errors.NonRetryable: no\n")
    assert await ar.hget(f"{aqueue.prefix}:attempts", "long") is None


def test_the_options_work_with_declared_keys(r: redis.Redis, prefix: str) -> None:
    """Profile declared-keys: release's refund and fail's options touch only declared keys."""
    refund_then_dead(WorkQueue(r, prefix, declared_keys=True))
