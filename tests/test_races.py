"""Interleavings and failures: the blocking lease's BLMOVE→claim window against cleaners, driven
step by step through the sans-IO plan, a concurrent exactly-once workload, and Redis failing
between and during plan steps.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from redis.backoff import NoBackoff
from redis.connection import Connection
from redis.exceptions import NoScriptError
from redis.retry import Retry

from rwq import CleanReport, Counts, Lease, RedisFailure, RwqError, WorkQueue
from rwq.conformance.redis_server import RedisServer
from rwq.protocol import operations as ops
from rwq.protocol.commands import Call, Command, Plan, RunScript

# --------------------------------------------------------------------------- a hand-driven shell


def execute(r: redis.Redis, command: Command) -> Any:
    """Run one plan command the way the shells do (EVALSHA, EVAL on NOSCRIPT, or a plain call)."""
    client: Any = r
    if isinstance(command, RunScript):
        args = (len(command.keys), *command.keys, *command.args)
        try:
            return client.evalsha(command.script.sha1, *args)
        except NoScriptError:
            return client.eval(command.script.source, *args)
    return client.execute_command(*command.args)


class Stepper:
    """A plan driven one command at a time, so the test can act between any two steps."""

    def __init__(self, r: redis.Redis, plan: Plan[list[Lease]]) -> None:
        self.r = r
        self.plan = plan
        self.command: Command | None = next(plan)
        self.result: list[Lease] | None = None

    def expect_script(self, name: str) -> RunScript:
        assert isinstance(self.command, RunScript), self.command
        assert self.command.script.name == name
        return self.command

    def expect_blmove(self) -> Call:
        assert isinstance(self.command, Call), self.command
        assert self.command.args[0] == "BLMOVE"
        return self.command

    def run(self) -> Any:
        """Execute the pending command and feed its reply to the plan; return the reply."""
        assert self.command is not None
        reply = execute(self.r, self.command)
        self.feed(reply)
        return reply

    def feed(self, reply: Any) -> None:
        try:
            self.command = self.plan.send(reply)
        except StopIteration as done:
            self.command = None
            self.result = done.value

    def run_until_blmove(self) -> None:
        """Run the non-blocking lease step(s) on an empty queue, up to the BLMOVE."""
        self.expect_script("lease")
        reply = self.run()
        assert reply[0] == 0
        assert len(reply) == 3
        self.expect_blmove()


def processing(r: redis.Redis, q: WorkQueue) -> list[bytes]:
    return r.lrange(q.keys.processing, 0, -1)  # type: ignore[return-value]


def queued(r: redis.Redis, q: WorkQueue) -> list[bytes]:
    return r.lrange(q.keys.queue, 0, -1)  # type: ignore[return-value]


def g2_clean(r: redis.Redis, q: WorkQueue) -> list[bytes]:
    """redis-work-queue G2's light clean: not atomic, reads only ``:lease:``."""
    requeued = []
    for raw in processing(r, q):
        if not r.exists(q.keys.queue.replace(b":queue", b":lease:") + raw):
            r.lrem(q.keys.processing, 0, raw)  # type: ignore[arg-type]
            r.lpush(q.keys.queue, raw)
            requeued.append(raw)
    return requeued


@pytest.fixture
def other(redis_server: RedisServer, queue: WorkQueue) -> Iterator[WorkQueue]:
    client = redis_server.client()
    yield WorkQueue(client, queue.prefix)
    client.close()


def blocking(queue: WorkQueue, lease_ms: int = 60_000) -> Plan[list[Lease]]:
    return ops.lease(queue.keys, lease_ms, block=True, timeout_ms=30_000)


# --------------------------------------------------------------------------- BLMOVE → claim window


def test_claim_without_interference(r: redis.Redis, queue: WorkQueue, other: WorkQueue) -> None:
    step = Stepper(r, blocking(queue))
    step.run_until_blmove()
    other.add("a", b"A")
    assert step.run() == b"a"
    claim = step.expect_script("claim")
    assert claim.args[0] == b"a"
    reply = step.run()
    assert reply[0] == 1
    assert reply[1] == b"A"
    assert step.result is not None
    (held,) = step.result
    assert (held.id, held.data) == ("a", b"A")
    assert r.get(queue.keys.lease("a")) == held.token.encode()
    assert queue.light_clean() == CleanReport((), 0)  # a cleaner after the claim skips it


@pytest.mark.parametrize("cleaner", ["light_clean", "g2"])
def test_cleaner_between_blmove_and_claim(
    r: redis.Redis, queue: WorkQueue, other: WorkQueue, cleaner: str
) -> None:
    step = Stepper(r, blocking(queue))
    step.run_until_blmove()
    other.add("a", b"A")
    assert step.run() == b"a"
    assert processing(r, queue) == [b"a"]
    assert r.exists(queue.keys.lease("a")) == 0  # the window: in processing, no lease
    if cleaner == "light_clean":
        assert other.light_clean().requeued == ("a",)
    else:
        assert g2_clean(r, queue) == [b"a"]
    assert queued(r, queue) == [b"a"]
    assert processing(r, queue) == []
    step.expect_script("claim")
    assert step.run() == [0]  # not claimed: the item is back in the queue
    assert r.exists(queue.keys.lease("a")) == 0
    step.expect_script("lease")  # the plan starts over ...
    step.run()
    assert step.result is not None  # ... and leases it from the queue, exactly once
    (held,) = step.result
    assert held.id == "a"
    assert processing(r, queue) == [b"a"]
    assert queued(r, queue) == []
    assert r.get(queue.keys.lease("a")) == held.token.encode()
    assert other.lease(1000) is None
    assert queue.complete(held, require_lease=True) is True
    assert r.dbsize() == 0


@pytest.mark.parametrize("cleaner", ["light_clean", "g2"])
def test_cleaner_then_another_worker_before_claim(
    r: redis.Redis, queue: WorkQueue, other: WorkQueue, cleaner: str
) -> None:
    step = Stepper(r, blocking(queue))
    step.run_until_blmove()
    other.add("a", b"A")
    assert step.run() == b"a"
    if cleaner == "light_clean":
        other.light_clean()
    else:
        g2_clean(r, queue)
    theirs = other.lease(60_000)
    assert theirs is not None
    assert theirs.id == "a"
    step.expect_script("claim")
    assert step.run() == [0]  # must not steal it
    assert processing(r, queue) == [b"a"]  # exactly one entry: the other worker's
    assert r.get(queue.keys.lease("a")) == theirs.token.encode()
    step.expect_script("lease")
    step.run()
    step.expect_blmove()  # back to waiting, empty-handed
    step.plan.close()
    assert step.result is None
    assert other.complete(theirs, require_lease=True) is True
    assert r.dbsize() == 0


def test_ghost_arriving_via_blmove(r: redis.Redis, queue: WorkQueue, other: WorkQueue) -> None:
    step = Stepper(r, blocking(queue))
    step.run_until_blmove()
    r.lpush(queue.keys.queue, "ghost")
    assert step.run() == b"ghost"
    step.expect_script("claim")
    assert step.run() == [0]
    assert processing(r, queue) == []  # the ghost entry was dropped
    step.expect_script("lease")
    step.run()
    step.expect_blmove()
    other.add("real", b"R")
    assert step.run() == b"real"
    step.expect_script("claim")
    step.run()
    assert step.result is not None
    assert [(held.id, held.data) for held in step.result] == [("real", b"R")]
    assert r.exists(queue.keys.lease("ghost")) == 0
    assert processing(r, queue) == [b"real"]


def test_duplicate_of_held_item_arriving_via_blmove(
    r: redis.Redis, queue: WorkQueue, other: WorkQueue
) -> None:
    other.add("a", b"A")
    theirs = other.lease(60_000)
    assert theirs is not None
    step = Stepper(r, blocking(queue))
    step.run_until_blmove()
    r.lpush(queue.keys.queue, "a")  # a stray duplicate entry
    assert step.run() == b"a"
    assert processing(r, queue) == [b"a", b"a"]
    step.expect_script("claim")
    assert step.run() == [0]
    assert processing(r, queue) == [b"a"]
    assert r.get(queue.keys.lease("a")) == theirs.token.encode()
    step.plan.close()


def test_duplicate_of_legacy_held_item_arriving_via_blmove(
    r: redis.Redis, queue: WorkQueue, other: WorkQueue
) -> None:
    other.add("a", b"A")
    r.rpoplpush(queue.keys.queue, queue.keys.processing)  # a G1 worker's RPOPLPUSH ...
    r.set(queue.keys.legacy_lease("a"), "g1-session", px=60_000)  # ... and its SETEX
    step = Stepper(r, blocking(queue))
    step.run_until_blmove()
    r.lpush(queue.keys.queue, "a")
    assert step.run() == b"a"
    assert step.run() == [0]
    assert processing(r, queue) == [b"a"]
    assert r.exists(queue.keys.lease("a")) == 0
    step.plan.close()


def test_completed_between_blmove_and_claim(r: redis.Redis, queue: WorkQueue, other: WorkQueue) -> None:
    step = Stepper(r, blocking(queue))
    step.run_until_blmove()
    other.add("a", b"A")
    assert step.run() == b"a"
    assert other.complete("a") is True  # e.g. an operator cancels it by id
    assert step.run() == [0]
    assert r.dbsize() == 0
    step.expect_script("lease")
    step.plan.close()


def test_client_dies_between_blmove_and_claim(r: redis.Redis, queue: WorkQueue, other: WorkQueue) -> None:
    """SPEC RWQ-FAIL-002: the moved id is abandoned, and the next light clean requeues it."""
    step = Stepper(r, blocking(queue))
    step.run_until_blmove()
    other.add("a", b"A")
    assert step.run() == b"a"
    step.plan.close()  # the worker is gone before its claim
    assert other.lease(1000) is None
    assert other.light_clean().requeued == ("a",)
    held = other.lease(1000)
    assert held is not None
    assert (held.id, held.data) == ("a", b"A")


def test_claim_then_cleaner_keeps_the_lease(r: redis.Redis, queue: WorkQueue, other: WorkQueue) -> None:
    step = Stepper(r, blocking(queue))
    step.run_until_blmove()
    other.add("a", b"A")
    step.run()
    step.run()
    assert step.result is not None
    assert other.light_clean() == CleanReport((), 0)
    assert g2_clean(r, queue) == []
    assert processing(r, queue) == [b"a"]


def test_blmove_times_out_and_plan_rechecks_the_queue(
    r: redis.Redis, queue: WorkQueue, other: WorkQueue
) -> None:
    step = Stepper(r, ops.lease(queue.keys, 1000, block=True, timeout_ms=30_000))
    step.run_until_blmove()
    wait = step.expect_blmove().args[-1]
    assert isinstance(wait, float)
    assert 0 < wait <= 1.0
    step.feed(None)  # as if BLMOVE timed out
    step.expect_script("lease")
    other.add("a", b"A")
    step.run()
    assert step.result is not None
    assert step.result[0].id == "a"


# --------------------------------------------------------------------------- concurrent workload


def test_concurrent_blocking_workers_and_cleaners_deliver_exactly_once(
    redis_server: RedisServer, queue: WorkQueue
) -> None:
    """Long leases, so any second delivery would be a race in the BLMOVE→claim window."""
    total = 300
    deadline = time.monotonic() + 30
    delivered: Counter[str] = Counter()
    first: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()
    errors: list[BaseException] = []

    def worker() -> None:
        client = redis_server.client()
        q = WorkQueue(client, queue.prefix)
        try:
            while not stop.is_set():
                held = q.lease(120_000, block=True, timeout_ms=300)
                if held is None:
                    continue
                with lock:
                    delivered[held.id] += 1
                if q.complete(held):
                    with lock:
                        first.append(held.id)
        except BaseException as exc:
            errors.append(exc)
        finally:
            client.close()

    def cleaner() -> None:
        client = redis_server.client()
        q = WorkQueue(client, queue.prefix)
        try:
            while not stop.is_set():
                q.light_clean(chunk=3)
                g2_clean(client, q)
        except BaseException as exc:
            errors.append(exc)
        finally:
            client.close()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    threads += [threading.Thread(target=cleaner) for _ in range(2)]
    for thread in threads:
        thread.start()
    rng = random.Random(7)
    try:
        added = 0
        while added < total:
            batch = [
                (f"job{n}", str(n).encode()) for n in range(added, min(total, added + rng.randint(1, 5)))
            ]
            assert queue.add_many(batch) == [True] * len(batch)
            added += len(batch)
            time.sleep(rng.random() * 0.004)  # let workers block again so BLMOVE hands items over
        while len(first) < total and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
    assert errors == []
    assert sorted(first) == sorted(f"job{n}" for n in range(total))
    duplicates = {item: n for item, n in delivered.items() if n > 1}
    assert duplicates == {}
    assert queue.counts() == Counts(0, 0)


# --------------------------------------------------------------------------- Redis failures


def no_retry_client(server: RedisServer, **kwargs: Any) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=server.port, retry=Retry(NoBackoff(), 0), **kwargs)


def blocked_client_id(r: redis.Redis, timeout: float = 5) -> int:
    """The id of the connection blocked in BLMOVE."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for entry in r.client_list():
            if entry.get("cmd") == "blmove":
                return int(entry["id"])
        time.sleep(0.01)
    raise AssertionError("no client blocked in BLMOVE")


def test_connection_killed_during_blmove_is_redis_failure(
    r: redis.Redis, redis_server: RedisServer, prefix: str
) -> None:
    client = no_retry_client(redis_server)
    q = WorkQueue(client, prefix)
    q.counts()
    caught: list[BaseException] = []

    def lease() -> None:
        try:
            q.lease(1000, block=True, timeout_ms=20_000)
        except BaseException as exc:
            caught.append(exc)

    thread = threading.Thread(target=lease)
    thread.start()
    r.client_kill_filter(_id=str(blocked_client_id(r)))
    thread.join(10)
    client.close()
    assert len(caught) == 1
    failure = caught[0]
    assert isinstance(failure, RedisFailure)
    assert isinstance(failure, RwqError)
    assert failure.code == "REDIS_ERROR"
    assert isinstance(failure.__cause__, redis.ConnectionError)
    assert r.dbsize() == 0  # nothing was moved


def test_default_retry_survives_a_killed_blmove(
    r: redis.Redis, redis_server: RedisServer, queue: WorkQueue, other: WorkQueue
) -> None:
    caught: list[Lease | None] = []
    thread = threading.Thread(target=lambda: caught.append(queue.lease(1000, block=True, timeout_ms=20_000)))
    thread.start()
    r.client_kill_filter(_id=str(blocked_client_id(r)))
    time.sleep(0.05)
    other.add("a", b"A")
    thread.join(10)
    assert len(caught) == 1
    assert caught[0] is not None
    assert caught[0].id == "a"


class KillAfter(redis.Redis):
    """A client whose connection fails while the ``n``-th script's reply is on its way.

    The server has run that script; the client never learns its answer. (A connection that dies
    between calls is harmless: the pool reconnects it at checkout, before anything is sent.)
    """

    def __init__(self, server: RedisServer, n: int) -> None:
        super().__init__(host="127.0.0.1", port=server.port, retry=Retry(NoBackoff(), 0))
        left = [n]

        class Lossy(Connection):
            script = False

            def send_command(self, *args: Any, **kwargs: Any) -> None:
                self.script = str(args[0]).upper() in ("EVALSHA", "EVAL")
                super().send_command(*args, **kwargs)  # type: ignore[no-untyped-call]

            def read_response(self, *args: Any, **kwargs: Any) -> Any:
                reply = super().read_response(*args, **kwargs)
                if self.script:
                    left[0] -= 1
                    if left[0] == 0:
                        self.disconnect()  # type: ignore[no-untyped-call]
                        raise redis.ConnectionError("connection lost before the reply arrived")
                return reply

        self.connection_pool.connection_class = Lossy


def test_connection_killed_between_add_many_chunks(
    r: redis.Redis, redis_server: RedisServer, prefix: str
) -> None:
    items = [(f"i{n}", b"") for n in range(2500)]
    client = KillAfter(redis_server, 1)
    with pytest.raises(RedisFailure) as info:
        WorkQueue(client, prefix).add_many(items)
    client.close()
    assert info.value.code == "REDIS_ERROR"
    healthy = WorkQueue(r, prefix)
    assert healthy.counts() == Counts(1000, 0)  # the first chunk took effect, the rest did not
    assert healthy.add_many(items) == [False] * 1000 + [True] * 1500  # retrying is safe
    assert healthy.counts() == Counts(2500, 0)
    assert len(set(r.lrange(healthy.keys.queue, 0, -1))) == 2500


def test_connection_killed_between_light_clean_chunks(
    r: redis.Redis, redis_server: RedisServer, queue: WorkQueue
) -> None:
    queue.add_many([(f"i{n}", b"") for n in range(4)])
    queue.lease_many(count=4, lease_ms=60_000)
    r.delete(queue.keys.lease("i3"))
    client = KillAfter(redis_server, 1)
    with pytest.raises(RedisFailure):
        WorkQueue(client, queue.prefix).light_clean(chunk=1)
    client.close()
    assert queue.counts() == Counts(0, 4)
    assert queue.light_clean(chunk=1).requeued == ("i3",)


def test_connection_killed_during_deep_clean_leaves_index_with_ttl(
    r: redis.Redis, redis_server: RedisServer, queue: WorkQueue
) -> None:
    queue.add("listed", b"")
    r.set(queue.keys.item("orphan"), b"")
    client = KillAfter(redis_server, 1)
    with pytest.raises(RedisFailure):
        WorkQueue(client, queue.prefix).deep_clean()
    client.close()
    (index,) = r.keys(f"{queue.prefix}:deep_clean:*")
    assert 0 < r.pttl(index) <= 600_000
    assert queue.deep_clean().requeued == ("orphan",)


def test_stopped_server_is_redis_failure(prefix: str) -> None:
    server = RedisServer().start()
    client = no_retry_client(server, socket_connect_timeout=2)
    q = WorkQueue(client, prefix)
    try:
        assert q.add("a", b"A") is True
        server.stop()
        for call in (lambda: q.lease(1000), lambda: q.add("b", b""), q.counts, q.light_clean):
            with pytest.raises(RedisFailure) as info:
                call()
            assert info.value.code == "REDIS_ERROR"
            assert isinstance(info.value.__cause__, redis.ConnectionError)
    finally:
        client.close()
        server.stop()


def test_server_stopped_during_blocking_lease(prefix: str) -> None:
    server = RedisServer().start()
    client = no_retry_client(server)
    q = WorkQueue(client, prefix)
    q.counts()
    caught: list[BaseException] = []

    def lease() -> None:
        try:
            q.lease(1000, block=True, timeout_ms=20_000)
        except BaseException as exc:
            caught.append(exc)

    thread = threading.Thread(target=lease)
    thread.start()
    try:
        admin = server.client()
        blocked_client_id(admin)
        admin.close()
        server.stop()
        thread.join(10)
    finally:
        client.close()
        server.stop()
    assert len(caught) == 1
    assert isinstance(caught[0], RedisFailure)
