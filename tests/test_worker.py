"""The threaded worker helper against a real Redis: concurrency, renewal, lost leases, shutdown, faults."""

from __future__ import annotations

import contextlib
import json
import logging
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from rwq import Counts, InvalidArgument, Lease, Outcome, RetryPolicy, WorkQueue
from rwq.conformance.redis_server import RedisServer
from rwq.worker import Job, Worker, WorkerStats


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll ``condition`` until it holds; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout} s")
        time.sleep(0.01)


@contextlib.contextmanager
def running(worker: Worker, timeout: float = 10.0) -> Iterator[None]:
    """Run the worker in a thread for the ``with`` block, then stop it and wait for run() to return."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            worker.run()
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    try:
        yield
    finally:
        worker.stop()
        thread.join(timeout)
    assert not thread.is_alive(), "run() did not return after stop()"
    if errors:
        raise errors[0]


def lease_keys(r: redis.Redis, prefix: str) -> list[bytes]:
    return list(r.scan_iter(match=f"{prefix}:lease:*"))


def blocked(r: redis.Redis, name: str) -> int:
    """How many connections of the client called ``name`` wait in a blocking command."""
    return sum(1 for client in r.client_list() if client["name"] == name and "b" in client["flags"])


def kill_connections(r: redis.Redis, name: str) -> int:
    """CLIENT KILL every connection of the client called ``name``."""
    ids = [client["id"] for client in r.client_list() if client["name"] == name]
    return sum(r.client_kill_filter(_id=client_id) for client_id in ids)


def test_processes_every_item_exactly_once_with_concurrency_4(r: redis.Redis, queue: WorkQueue) -> None:
    ids = [f"item-{n}" for n in range(40)]
    queue.add_many((item_id, item_id.encode()) for item_id in ids)
    seen: list[str] = []
    active, peak = 0, 0
    lock = threading.Lock()

    def handle(job: Job) -> None:
        nonlocal active, peak
        assert job.data == job.id.encode()
        with lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.02)
        with lock:
            active -= 1
            seen.append(job.id)

    worker = Worker(queue, handle, concurrency=4, lease_ms=5_000, poll_timeout_ms=200)
    with running(worker):
        wait_until(lambda: worker.stats.completed == len(ids))
    assert sorted(seen) == sorted(ids)
    assert peak == 4
    assert worker.stats == WorkerStats(completed=40)
    assert queue.counts() == Counts(0, 0)
    # The default retry policy stays, and the pace of the cleans (a key with a TTL).
    left = set(r.keys(f"{queue.prefix}:*")) - {f"{queue.prefix}:cleaned".encode()}
    assert left == {queue.keys.policy}


def test_handler_error_releases_the_item_and_a_later_attempt_completes_it(
    queue: WorkQueue, caplog: pytest.LogCaptureFixture
) -> None:
    queue.add("x", b"X")
    tokens: list[str] = []
    reported: list[tuple[str, Exception]] = []

    def handle(job: Job) -> None:
        tokens.append(job.lease.token)
        if len(tokens) == 1:
            raise RuntimeError("boom")

    worker = Worker(
        queue,
        handle,
        lease_ms=5_000,
        poll_timeout_ms=200,
        on_error=lambda job, exc: reported.append((job.id, exc)),
    )
    with running(worker):
        wait_until(lambda: worker.stats.completed == 1)
    assert len(set(tokens)) == len(tokens) == 2
    assert worker.stats == WorkerStats(completed=1, failed=1)
    assert [(item_id, str(exc)) for item_id, exc in reported] == [("x", "boom")]
    failures = [rec for rec in caplog.records if rec.levelno == logging.ERROR and rec.exc_info]
    assert [rec.getMessage() for rec in failures] == ["item 'x': handler failed; recording a failed attempt"]
    assert queue.counts() == Counts(0, 0)


def test_handler_errors_follow_the_retry_policy_until_the_item_is_dead(queue: WorkQueue) -> None:
    """Under a retry policy a failing item is retried after its backoff, then dead-lettered."""
    queue.set_retry_policy(RetryPolicy(max_attempts=3, backoff="fixed", base_ms=50))
    queue.add("poison", b"P")
    attempts: list[int] = []

    def handle(job: Job) -> None:
        attempts.append(job.lease.attempt)
        raise ValueError("cannot parse")

    worker = Worker(queue, handle, lease_ms=5_000, poll_timeout_ms=100)
    with running(worker):
        wait_until(lambda: queue.counts().dead == 1)
    assert attempts == [1, 2, 3]
    assert worker.stats.failed == 3
    dead = queue.dead_item("poison")
    assert dead is not None
    assert (dead.reason, dead.attempts, dead.data) == ("ValueError: cannot parse", 3, b"P")
    assert queue.counts() == Counts(0, 0, 0, 1)


def test_renewal_keeps_a_job_longer_than_its_lease_owned(
    r: redis.Redis, queue: WorkQueue, redis_server: RedisServer
) -> None:
    queue.add("slow", b"")
    calls: list[str] = []

    def handle(job: Job) -> None:
        calls.append(job.id)
        time.sleep(1.5)

    worker = Worker(
        queue,
        handle,
        lease_ms=1000,  # ten renewals per lease time: a renewal late by most of a second keeps it
        renew_interval_ms=100,
        poll_timeout_ms=200,
    )
    other_client = redis_server.client()
    other = WorkQueue(other_client, queue.prefix)
    requeued: list[str] = []
    with running(worker):
        wait_until(lambda: calls == ["slow"])
        while worker.stats.completed == 0:
            requeued += other.light_clean().requeued
            assert other.lease(300) is None
            assert r.pttl(f"{queue.prefix}:lease:slow") > 0 or worker.stats.completed
            time.sleep(0.05)
    other_client.close()
    assert requeued == []
    assert calls == ["slow"]
    assert worker.stats == WorkerStats(completed=1)


def test_a_lease_taken_over_is_reported_lost_and_not_completed(
    r: redis.Redis, queue: WorkQueue, redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    queue.add("x", b"X")
    started = threading.Event()
    noticed: list[bool] = []

    def handle(job: Job) -> None:
        started.set()
        noticed.append(job.lost.wait(5))

    worker = Worker(queue, handle, lease_ms=1_000, renew_interval_ms=100, poll_timeout_ms=200)
    other_client = redis_server.client()
    other = WorkQueue(other_client, queue.prefix)
    with running(worker):
        assert started.wait(5)
        r.delete(f"{queue.prefix}:lease:x")  # the lease "expires"; another client takes the item over
        assert other.light_clean().requeued == ("x",)
        theirs = other.lease(5_000)
        assert theirs is not None
        assert theirs.id == "x"
        wait_until(lambda: worker.stats.lost == 1)
    assert noticed == [True]
    assert worker.stats == WorkerStats(lost=1)
    assert any("lease lost" in rec.getMessage() for rec in caplog.records)
    assert other.complete(theirs, require_lease=True)  # the new holder still owns it
    other_client.close()


def test_stop_lets_running_handlers_finish_within_the_grace_period(queue: WorkQueue) -> None:
    queue.add_many((f"i{n}", b"") for n in range(4))
    started: list[str] = []

    def handle(job: Job) -> None:
        started.append(job.id)
        time.sleep(0.3)

    worker = Worker(
        queue,
        handle,
        concurrency=2,
        lease_ms=5_000,
        poll_timeout_ms=200,
        shutdown_grace_ms=5_000,
    )
    with running(worker):
        wait_until(lambda: len(started) == 2)
    assert len(started) == 2
    assert worker.stats == WorkerStats(completed=2)
    assert queue.counts() == Counts(2, 0)


def test_stop_releases_what_is_still_running_after_the_grace_period(r: redis.Redis, queue: WorkQueue) -> None:
    queue.add_many((f"i{n}", b"") for n in range(5))
    jobs: list[Job] = []

    def handle(job: Job) -> None:
        jobs.append(job)
        job.lost.wait(10)

    worker = Worker(queue, handle, concurrency=3, lease_ms=5_000, poll_timeout_ms=200, shutdown_grace_ms=200)
    with running(worker):
        wait_until(lambda: len(jobs) == 3)
        stopped_at = time.monotonic()
        worker.stop()
    assert time.monotonic() - stopped_at < 1.5
    assert all(job.lost.is_set() for job in jobs)
    assert worker.stats == WorkerStats(released=3)
    assert queue.counts() == Counts(5, 0)
    assert lease_keys(r, queue.prefix) == []


def test_an_item_leased_as_the_worker_stops_is_given_back_unrun(
    r: redis.Redis, queue: WorkQueue, redis_server: RedisServer
) -> None:
    calls: list[str] = []
    worker_client = redis_server.client(client_name="late-worker")
    worker = Worker(
        WorkQueue(worker_client, queue.prefix),
        lambda job: calls.append(job.id),
        lease_ms=5_000,
        poll_timeout_ms=3_000,
    )
    with running(worker):
        wait_until(lambda: blocked(r, "late-worker") == 1)
        worker.stop()
        queue.add("late", b"")  # the slot's pending blocking lease takes it after stop()
    worker_client.close()
    assert calls == []
    assert worker.stats == WorkerStats(released=1)
    assert queue.counts() == Counts(1, 0)


class CountingQueue(WorkQueue):
    """Counts the worker's leasing calls; ``after_next`` runs after each complete_and_lease."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: Counter[str] = Counter()
        self.after_next: Callable[[], object] = lambda: None

    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        self.calls["lease"] += 1
        return super().lease(lease_ms, block=block, timeout_ms=timeout_ms)

    def complete_and_lease(
        self, item: Lease | str, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[Outcome, Lease | None]:
        self.calls["complete_and_lease"] += 1
        result = super().complete_and_lease(item, lease_ms, require_lease=require_lease)
        self.after_next()
        return result


def test_each_success_completes_and_leases_the_next_in_one_call(r: redis.Redis, queue: WorkQueue) -> None:
    counting = CountingQueue(r, queue.prefix)
    counting.add_many((f"i{n}", b"") for n in range(20))
    seen: list[str] = []
    leases_at_settle: list[int] = []
    counting.after_next = lambda: leases_at_settle.append(counting.calls["lease"])
    worker = Worker(counting, lambda job: seen.append(job.id), lease_ms=5_000, poll_timeout_ms=100)
    with running(worker):
        wait_until(lambda: worker.stats.completed == 20)
    assert seen == [f"i{n}" for n in range(20)]
    assert leases_at_settle == [1] * 20  # one lease to start; every next item came with a settle
    assert worker.stats == WorkerStats(completed=20)
    # The default retry policy stays, and the pace of the cleans (a key with a TTL).
    left = set(r.keys(f"{queue.prefix}:*")) - {f"{queue.prefix}:cleaned".encode()}
    assert left == {queue.keys.policy}


def test_an_item_taken_with_the_last_completion_is_given_back_at_stop(
    r: redis.Redis, queue: WorkQueue
) -> None:
    counting = CountingQueue(r, queue.prefix)
    counting.add_many([("a", b""), ("b", b"")])
    seen: list[str] = []
    worker = Worker(counting, lambda job: seen.append(job.id), lease_ms=5_000, poll_timeout_ms=100)
    counting.after_next = worker.stop  # stopped just after "b" was leased with a's completion
    with running(worker):
        wait_until(lambda: worker.stats.completed == 1)
    assert seen == ["a"]
    assert worker.stats == WorkerStats(completed=1, released=1)
    assert queue.counts() == Counts(1, 0)
    assert lease_keys(r, queue.prefix) == []


class Fatal(BaseException):
    pass


def test_a_base_exception_in_a_handler_fails_the_item_and_stops_the_worker(queue: WorkQueue) -> None:
    """The handler failed: its item uses an attempt (retried later), never refunded (RWQ-WORKER-004)."""
    queue.add("x", b"")

    def handle(job: Job) -> None:
        raise Fatal

    worker = Worker(queue, handle, lease_ms=5_000, poll_timeout_ms=200, shutdown_grace_ms=0)
    watchdog = threading.Timer(5, worker.stop)  # ends a run() that wrongly keeps going
    watchdog.start()
    with pytest.raises(Fatal):
        worker.run()
    watchdog.cancel()
    assert worker.stats == WorkerStats(failed=1)
    assert queue.counts() == Counts(0, 0, delayed=1)


def test_recovers_from_killed_connections_and_finishes(
    r: redis.Redis, queue: WorkQueue, redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    worker_client = redis_server.client(client_name="kill-me", retry=Retry(NoBackoff(), 0))  # no retries
    handled: set[str] = set()

    def handle(job: Job) -> None:
        time.sleep(0.01)
        handled.add(job.id)

    worker = Worker(
        WorkQueue(worker_client, queue.prefix),
        handle,
        concurrency=4,
        lease_ms=1_000,
        renew_interval_ms=100,
        poll_timeout_ms=500,
        clean_interval_ms=200,
    )
    ids = {f"item-{n}" for n in range(30)}
    with running(worker):
        wait_until(lambda: blocked(r, "kill-me") == 4)
        assert kill_connections(r, "kill-me") >= 4
        queue.add_many((item_id, b"") for item_id in sorted(ids))
        for _ in range(3):
            time.sleep(0.05)
            kill_connections(r, "kill-me")
        wait_until(lambda: handled == ids and queue.counts() == Counts(0, 0), timeout=15)
    worker_client.close()
    assert any("lease failed" in rec.getMessage() for rec in caplog.records)
    # The default retry policy stays, and the pace of the cleans (a key with a TTL).
    left = set(r.keys(f"{queue.prefix}:*")) - {f"{queue.prefix}:cleaned".encode()}
    assert left == {queue.keys.policy}


WORKER_PROCESS = """
import dataclasses, json, sys, time
import redis
from rwq import WorkQueue
from rwq.worker import Worker

client = redis.Redis(port=int(sys.argv[1]))

def handle(job):
    client.rpush(sys.argv[3], job.id)  # tells the test this handler runs
    time.sleep(60)  # ignores job.lost: only the shutdown's release frees the item

queue = WorkQueue(client, sys.argv[2])
worker = Worker(queue, handle, concurrency=3, lease_ms=10_000, poll_timeout_ms=200, shutdown_grace_ms=300)
with worker.install_signal_handlers():
    worker.run()
print(json.dumps(dataclasses.asdict(worker.stats)))
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_shuts_a_worker_process_down_and_releases_its_items(
    r: redis.Redis, queue: WorkQueue, redis_server: RedisServer, sig: signal.Signals
) -> None:
    queue.add_many((f"i{n}", b"") for n in range(5))
    process = subprocess.Popen(
        [sys.executable, "-c", WORKER_PROCESS, str(redis_server.port), queue.prefix, "started"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(lambda: r.llen("started") == 3, timeout=15)
        assert queue.counts() == Counts(2, 3)
        signalled = time.monotonic()
        process.send_signal(sig)
        out, err = process.communicate(timeout=10)
        elapsed = time.monotonic() - signalled
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 0, err.decode()
    assert elapsed < 2.5
    assert json.loads(out) == {"completed": 0, "failed": 0, "released": 3, "lost": 0}
    assert queue.counts() == Counts(5, 0)
    assert lease_keys(r, queue.prefix) == []


def test_signal_handlers_are_restored_after_the_block(queue: WorkQueue) -> None:
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    worker = Worker(queue, lambda job: None)
    with worker.install_signal_handlers():
        assert signal.getsignal(signal.SIGTERM) not in (before[signal.SIGTERM], signal.SIG_DFL)
    assert {sig: signal.getsignal(sig) for sig in before} == before


@pytest.mark.parametrize(
    "settings",
    [
        {"concurrency": 0},
        {"lease_ms": 0},
        {"lease_ms": 1_000, "renew_interval_ms": 1_000},
        {"poll_timeout_ms": 0},
        {"clean_interval_ms": 0},
        {"shutdown_grace_ms": -1},
        {"lease_ms": 1.5},
    ],
)
def test_bad_settings_are_refused(queue: WorkQueue, settings: dict[str, object]) -> None:
    with pytest.raises(InvalidArgument):
        Worker(queue, lambda job: None, **settings)  # type: ignore[arg-type]
