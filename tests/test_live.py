"""Profile workers (SPEC §21): the heartbeat script on a real Redis, the clients' methods, the
workers' own heartbeat and ``rwq workers``. Every wait is bounded."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis
from click.testing import CliRunner
from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]

from rwq import AsyncWorker, AsyncWorkQueue, Job, Worker, WorkQueue
from rwq.cli import cli
from rwq.conformance.redis_server import RedisServer
from rwq.errors import InvalidArgument, InvalidType, WrongType
from rwq.protocol import live
from rwq.protocol.scripts import registry
from rwq.sharded import ShardedWorkQueue

ROOT = Path(__file__).resolve().parents[1]


def heartbeat(r: redis.Redis, prefix: str, *argv: Any) -> Any:
    """One raw EVAL of the canonical script."""
    return r.eval(registry()["heartbeat"].source.decode(), 1, f"{prefix}:queue", *argv)


def keyspace(r: redis.Redis) -> dict[bytes, Any]:
    return {key: r.dump(key) for key in sorted(r.keys("*"))}  # type: ignore[misc]


def server_ms(r: redis.Redis) -> int:
    seconds, micros = r.time()
    return int(seconds) * 1000 + int(micros) // 1000


def _until(condition: Callable[[], bool], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


# --------------------------------------------------------------------------- the script


def test_beat_sets_the_deadline_from_the_server_clock_and_lists_live_workers(fr: redis.Redis) -> None:
    """RWQ-LIVE-002/003 on the frozen clock: deadline = now + ttl; listed while deadline > now,
    earliest deadline first; both keys expire at the latest deadline (RWQ-LIVE-004)."""
    now, removed = heartbeat(fr, "q", "beat", "long", 60_000, '{"n":1}')
    assert removed == 0
    assert heartbeat(fr, "q", "beat", "short", 1000, "{}") == [now, 0]
    assert heartbeat(fr, "q", "list", 0, 10) == [
        now,
        [[b"short", b"{}", now + 1000], [b"long", b'{"n":1}', now + 60_000]],
    ]
    assert heartbeat(fr, "q", "list", 1, 10)[1] == [[b"long", b'{"n":1}', now + 60_000]]
    assert fr.pttl("q:workers") == fr.pttl("q:workers:seen") == 60_000
    assert fr.zscore("q:workers:seen", "short") == now + 1000


def test_a_beat_trims_expired_entries_and_expires_keys_at_the_latest_deadline(r: redis.Redis) -> None:
    """RWQ-LIVE-004: an entry at or before now goes from both keys with the next beat (100 at most);
    a short-ttl beat never shortens the keys' life below a longer-lived entry's deadline."""
    r.zadd("t:workers:seen", {f"dead{i}": 1 for i in range(150)})
    r.hset("t:workers", mapping={f"dead{i}": "{}" for i in range(150)})
    heartbeat(r, "t", "beat", "long", 600_000, "{}")
    _now, removed = heartbeat(r, "t", "beat", "short", 1000, "{}")
    assert removed == 50  # the first beat removed 100
    assert r.zcard("t:workers:seen") == r.hlen("t:workers") == 2
    assert r.pttl("t:workers") > 590_000
    assert r.pttl("t:workers:seen") > 590_000


def test_leave_removes_the_entry(r: redis.Redis) -> None:
    heartbeat(r, "l", "beat", "w1", 30_000, "{}")
    assert heartbeat(r, "l", "leave", "w1") == 1
    assert heartbeat(r, "l", "leave", "w1") == 0
    assert r.keys("l:*") == []


@pytest.mark.parametrize("key", ["workers", "workers:seen"])
def test_a_key_of_another_type_is_refused_with_nothing_written(r: redis.Redis, key: str) -> None:
    """RWQ-SCRIPT-007 for every mode; the client raises WrongType."""
    r.set(f"w:{key}", "x")
    before = keyspace(r)
    for argv in (["beat", "w1", 30_000, "{}"], ["leave", "w1"], ["list", 0, 10]):
        with pytest.raises(redis.ResponseError, match="RWQ_WRONG_TYPE"):
            heartbeat(r, "w", *argv)
    with pytest.raises(WrongType):
        WorkQueue(r, "w").workers()
    assert keyspace(r) == before


# --------------------------------------------------------------------------- the clients


def test_the_client_round_trips_records_and_leaves(queue: WorkQueue) -> None:
    record = {"id": "w1", "items": ["a", "é"], "pid": 7}
    beat = queue.worker_beat("w1", 30_000, record)
    assert beat.removed == 0
    [seen] = queue.workers()
    assert (seen.id, seen.record, seen.deadline_ms) == ("w1", record, beat.now_ms + 30_000)
    assert queue.worker_leave("w1") is True
    assert queue.workers() == []
    assert queue.worker_leave("w1") is False


BAD_CALLS: list[tuple[str, Callable[[WorkQueue], Any], type[Exception]]] = [
    ("ttl 999", lambda q: q.worker_beat("w", 999, {}), InvalidArgument),
    ("ttl 3600001", lambda q: q.worker_beat("w", 3_600_001, {}), InvalidArgument),
    ("ttl 1.5", lambda q: q.worker_beat("w", 1.5, {}), InvalidType),  # type: ignore[arg-type]
    ("ttl '5'", lambda q: q.worker_beat("w", "5", {}), InvalidType),  # type: ignore[arg-type]
    ("ttl true", lambda q: q.worker_beat("w", True, {}), InvalidType),
    ("empty id", lambda q: q.worker_beat("", 30_000, {}), InvalidArgument),
    ("id of 65", lambda q: q.worker_beat("w" * 65, 30_000, {}), InvalidArgument),
    ("id with a space", lambda q: q.worker_beat("w 1", 30_000, {}), InvalidArgument),
    ("id not a str", lambda q: q.worker_beat(b"w", 30_000, {}), InvalidType),  # type: ignore[arg-type]
    ("record a list", lambda q: q.worker_beat("w", 30_000, []), InvalidType),  # type: ignore[arg-type]
    ("record of 4097 bytes", lambda q: q.worker_beat("w", 30_000, {"a": "x" * 4089}), InvalidArgument),
    ("record not JSON", lambda q: q.worker_beat("w", 30_000, {"a": object()}), InvalidArgument),
    ("record with NaN", lambda q: q.worker_beat("w", 30_000, {"a": float("nan")}), InvalidArgument),
    ("leave, bad id", lambda q: q.worker_leave("w/1"), InvalidArgument),
    ("list, count 0", lambda q: q.workers(count=0), InvalidArgument),
    ("list, count 1001", lambda q: q.workers(count=1001), InvalidArgument),
    ("list, offset -1", lambda q: q.workers(offset=-1), InvalidArgument),
    ("list, offset 1000001", lambda q: q.workers(offset=1_000_001), InvalidArgument),
]


@pytest.mark.parametrize(("label", "call", "error"), BAD_CALLS, ids=[label for label, _, _ in BAD_CALLS])
def test_bad_input_is_a_typed_error_before_any_io(
    redis_server: RedisServer, label: str, call: Callable[[WorkQueue], Any], error: type[Exception]
) -> None:
    """Nothing reaches Redis: the client on a closed port would fail with REDIS_ERROR otherwise."""
    closed = redis.Redis(port=1)
    with pytest.raises(error):
        call(WorkQueue(closed, "jobs"))
    with pytest.raises(error):
        call(ShardedWorkQueue(closed, "jobs", shards=2))  # type: ignore[arg-type]


def test_edges_are_accepted(queue: WorkQueue) -> None:
    queue.worker_beat("w" * 64, 1000, {"a": "x" * 4088})  # 64 bytes, ttl 1000, a record of 4096
    queue.worker_beat("A-z_0.9:x", 3_600_000, {})
    assert {w.id for w in queue.workers(offset=0, count=1000)} == {"w" * 64, "A-z_0.9:x"}
    assert queue.workers(offset=1_000_000, count=1) == []


def test_a_sharded_queue_registers_on_shard_0(r: redis.Redis) -> None:
    sharded = ShardedWorkQueue(r, "sq", shards=3)
    sharded.worker_beat("w1", 30_000, {"id": "w1"})
    assert r.hexists("{sq#0}:workers", "w1")
    assert [w.id for w in sharded.workers()] == ["w1"]
    assert sharded.worker_leave("w1") is True


# --------------------------------------------------------------------------- the workers


def test_a_worker_shows_up_within_one_interval_and_leaves_when_stopped(queue: WorkQueue) -> None:
    """RWQ-LIVE-001, 005, 006, 007: registered at start, its counts and items in hand in the
    record (no token), started_ms server time; gone once it stopped."""
    release = threading.Event()
    queue.add_many([("a", b"x"), ("b", b"y")])

    def handler(job: Job) -> None:
        if job.id == "b":
            release.wait(10)

    worker = Worker(queue, handler, heartbeat_ms=300, heartbeat_ttl_ms=1000, poll_timeout_ms=100)
    started = time.monotonic()
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        _until(
            lambda: any(w.record.get("in_hand") == 1 and w.record["completed"] == 1 for w in queue.workers()),
            5,
        )
        [seen] = queue.workers()
        assert seen.id == worker.worker_id
        assert len(seen.id) == 16
        record = seen.record
        assert record["items"] == ["b"]
        assert record["kind"] == "worker"
        assert record["language"] == "python"
        assert (record["completed"], record["failed"], record["released"], record["lost"]) == (1, 0, 0, 0)
        token = queue._redis.get(queue.keys.lease("b")).decode()
        assert token not in json.dumps(record)
        server_ms = int(queue._redis.time()[0]) * 1000
        assert server_ms - 10_000 < record["started_ms"] <= server_ms + 1000
        assert seen.deadline_ms > server_ms
    finally:
        release.set()
        worker.stop()
        thread.join(30)
    assert time.monotonic() - started < 10
    assert queue.workers() == []


BEATING_WORKER = """
    import sys, redis
    from rwq import Worker, WorkQueue
    queue = WorkQueue(redis.Redis(port=int(sys.argv[1])), sys.argv[2])
    Worker(queue, lambda job: None, heartbeat_ms=200, heartbeat_ttl_ms=1000, poll_timeout_ms=100).run()
"""


def test_a_sigkilled_worker_disappears_at_its_deadline(r: redis.Redis, queue: WorkQueue) -> None:
    """A worker that never leaves is listed until its last beat's deadline, then not (RWQ-LIVE-003)."""
    port = r.connection_pool.connection_kwargs["port"]
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(BEATING_WORKER), str(port), queue.prefix]
    )
    try:
        _until(lambda: len(queue.workers()) == 1, 20)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
    [last] = queue.workers()
    assert last.deadline_ms > server_ms(r)  # still listed: it died without leaving
    _until(lambda: queue.workers() == [], 3)
    assert server_ms(r) >= last.deadline_ms  # gone at its deadline, not before


def test_a_failing_beat_is_logged_and_never_stops_the_worker(
    queue: WorkQueue, caplog: pytest.LogCaptureFixture
) -> None:
    queue._redis.set(f"{queue.prefix}:workers", "not a hash")
    done = threading.Event()
    queue.add("a", b"x")
    worker = Worker(
        queue, lambda job: done.set(), heartbeat_ms=100, heartbeat_ttl_ms=1000, poll_timeout_ms=100
    )
    thread = threading.Thread(target=worker.run)
    with caplog.at_level(logging.WARNING, logger="rwq"):
        thread.start()
        try:
            assert done.wait(10)
            _until(lambda: "heartbeat of worker" in caplog.text, 5)
        finally:
            worker.stop()
            thread.join(30)
    assert worker.stats.completed == 1
    assert "WRONG_TYPE" in caplog.text


def test_worker_heartbeat_settings_are_checked(queue: WorkQueue) -> None:
    with pytest.raises(InvalidArgument):
        Worker(queue, lambda job: None, heartbeat_ttl_ms=999)
    with pytest.raises(InvalidArgument):
        Worker(queue, lambda job: None, heartbeat_ms=10_001, heartbeat_ttl_ms=30_000)  # > ttl / 3
    assert Worker(queue, lambda job: None).heartbeat_ms == live.BEAT_MS == 5000


async def test_an_async_worker_shows_up_and_leaves(aqueue: AsyncWorkQueue) -> None:
    seen = asyncio.Event()

    async def handler(job: Any) -> None:
        seen.set()

    await aqueue.add("a", b"x")
    worker = AsyncWorker(aqueue, handler, heartbeat_ms=200, heartbeat_ttl_ms=1000, poll_timeout_ms=100)
    task = asyncio.create_task(worker.run())
    try:
        await asyncio.wait_for(seen.wait(), 10)
        for _ in range(100):
            listed = await aqueue.workers()
            if listed and listed[0].record["completed"] == 1:
                break
            await asyncio.sleep(0.05)
        assert [w.id for w in listed] == [worker.worker_id]
        assert listed[0].record["completed"] == 1
    finally:
        worker.stop()
        await asyncio.wait_for(task, 30)
    assert await aqueue.workers() == []


# --------------------------------------------------------------------------- rwq workers


def test_rwq_workers_lists_them(queue: WorkQueue, redis_server: RedisServer) -> None:
    queue.worker_beat(
        "w1", 30_000, {"id": "w1", "kind": "worker", "host": "h", "ttl_ms": 30_000, "started_ms": 1}
    )
    url = f"redis://127.0.0.1:{redis_server.port}/0"
    result = CliRunner().invoke(cli, ["workers", "--url", url, "--prefix", queue.prefix, "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    schema = json.loads((ROOT / "schemas" / "cli-output.schema.json").read_text())
    Draft202012Validator(schema).validate(document)
    assert [w["id"] for w in document["workers"]] == ["w1"]
    table = CliRunner().invoke(cli, ["workers", "--url", url, "--prefix", queue.prefix])
    assert table.exit_code == 0
    assert "w1" in table.output
