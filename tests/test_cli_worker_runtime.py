"""Issue #21, ``rwq worker`` as a process: every handler kind, the worker ACL role, a prompt
``--burst``, JSON logs that stay JSON (warnings and per-job fields included), ``--otel``, and the
second signal."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import redis
from click.testing import CliRunner

from rwq import RetryPolicy, WorkQueue
from rwq.cli import cli
from rwq.conformance.redis_server import RedisServer

PASSWORD = "worker-role-secret"
TASKS = """
import asyncio, functools, os, time, redis
r = redis.Redis.from_url(os.environ["RWQ_TASKS_URL"])

def handle(job):
    r.rpush("done", job.id)

async def push(prefix, job):
    await asyncio.sleep(0)
    r.rpush("done", prefix + job.id)

class AsyncHandler:
    async def __call__(self, job):
        await push("", job)

handle_object = AsyncHandler()
handle_partial = functools.partial(push, "")
handle_method = AsyncHandler().__call__

def stuck(job):
    r.rpush("started", job.id)
    time.sleep(60)

async def astuck(job):
    r.rpush("started", job.id)
    await asyncio.sleep(60)
"""
OTEL_SETUP = """
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

class ToRedis(SpanExporter):
    def export(self, spans):
        for span in spans:
            r.rpush("spans", f"{span.name} {span.attributes['messaging.message.id']}")
        return SpanExportResult.SUCCESS

provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(ToRedis()))
trace.set_tracer_provider(provider)
"""


def start(
    tmp_path: Path, server: RedisServer, *args: str, url: str | None = None, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """``rwq worker ARGS`` in ``tmp_path`` (its tasks module there), logged in as ``url``'s user."""
    if not (tmp_path / "tasks.py").exists():
        (tmp_path / "tasks.py").write_text(TASKS)
    environment = {**os.environ, "RWQ_TASKS_URL": server.url, "RWQ_URL": url or server.url, **(env or {})}
    command = [sys.executable, "-m", "rwq.console", "worker", *args]
    return subprocess.Popen(command, cwd=tmp_path, env=environment, stderr=subprocess.PIPE, text=True)


def json_lines(stderr: str) -> list[dict[str, Any]]:
    """Every stderr line, each parsed as JSON (a line that is not JSON fails the test)."""
    return [json.loads(line) for line in stderr.splitlines()]


@pytest.mark.parametrize("handler", ["tasks:handle_object", "tasks:handle_partial", "tasks:handle_method"])
def test_every_async_kind_runs_on_the_async_worker(
    tmp_path: Path, redis_server: RedisServer, r: redis.Redis, handler: str
) -> None:
    """An object with async __call__, a partial of a coroutine function, a bound async method:
    each runs (its side effect is there for every item), none is completed unrun."""
    WorkQueue(r, "jobs").add_many([(f"i{n}", b"x") for n in range(20)])
    process = start(tmp_path, redis_server, handler, "-q", "jobs", "--burst", "-c", "3")
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert sorted(r.lrange("done", 0, -1)) == sorted(f"i{n}".encode() for n in range(20))


@pytest.mark.parametrize("handler", ["tasks:handle", "tasks:handle_object"])
def test_the_worker_runs_as_the_worker_role(
    tmp_path: Path, redis_server: RedisServer, r: redis.Redis, handler: str
) -> None:
    """The user `rwq acl worker` prints (no LLEN): start-up and --burst need nothing more."""
    line = CliRunner().invoke(cli, ["acl", "worker", "--prefix", "jobs", "--user", "jobs-worker"]).output
    words = shlex.split(line.strip())
    assert words[:2] == ["ACL", "SETUSER"]
    r.execute_command(*words, f">{PASSWORD}")  # type: ignore[no-untyped-call]
    try:
        WorkQueue(r, "jobs").set_retry_policy(RetryPolicy())  # as an admin would
        WorkQueue(r, "jobs").add_many([(f"i{n}", b"x") for n in range(30)])
        url = f"redis://jobs-worker:{PASSWORD}@127.0.0.1:{redis_server.port}/0"
        with pytest.raises(redis.exceptions.NoPermissionError):
            redis.Redis.from_url(url).llen("jobs:queue")
        process = start(tmp_path, redis_server, handler, "-q", "jobs", "--burst", "-c", "2", url=url)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 0, stderr
        assert sorted(r.lrange("done", 0, -1)) == sorted(f"i{n}".encode() for n in range(30))
        counts = WorkQueue(r, "jobs").counts()
        assert (counts.queued, counts.processing) == (0, 0)
        assert PASSWORD not in stderr
    finally:
        r.acl_deluser("jobs-worker")


def test_burst_leaves_an_empty_queue_promptly(tmp_path: Path, redis_server: RedisServer) -> None:
    """From the worker's first log line to its last, on a queue with nothing to do."""
    process = start(tmp_path, redis_server, "tasks:handle", "-q", "jobs", "--burst", "--log-format", "json")
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    times = [datetime.fromisoformat(entry["time"]) for entry in json_lines(stderr)]
    assert (times[-1] - times[0]).total_seconds() < 0.5, stderr


def test_json_logs_stay_json_with_warnings_and_job_fields(
    tmp_path: Path, redis_server: RedisServer, r: redis.Redis
) -> None:
    """The maxmemory-policy warning goes through logging; each settled job has its fields."""
    WorkQueue(r, "jobs").add_many([("a", b"x"), ("b", b"x")])
    r.config_set("maxmemory-policy", "allkeys-lru")
    try:
        process = start(
            tmp_path, redis_server, "tasks:handle", "-q", "jobs", "--burst", "--log-format", "json"
        )
        _, stderr = process.communicate(timeout=60)
    finally:
        r.config_set("maxmemory-policy", "noeviction")
    assert process.returncode == 0, stderr
    entries = json_lines(stderr)
    assert any(e["level"] == "WARNING" and "allkeys-lru" in e["message"] for e in entries), stderr
    jobs = sorted((e["queue"], e["id"], e["outcome"]) for e in entries if "outcome" in e)
    assert jobs == [("jobs", "a", "completed"), ("jobs", "b", "completed")]
    assert all(isinstance(e["duration_ms"], int) and "attempt" in e for e in entries if "outcome" in e)


def test_otel_turns_on_the_opentelemetry_hook(
    tmp_path: Path, redis_server: RedisServer, r: redis.Redis
) -> None:
    (tmp_path / "tasks.py").write_text(TASKS + OTEL_SETUP)
    WorkQueue(r, "jobs").add_many([("a", b"x"), ("b", b"x")])
    process = start(tmp_path, redis_server, "tasks:handle", "-q", "jobs", "--burst", "--otel")
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert sorted(r.lrange("spans", 0, -1)) == [b"process jobs a", b"process jobs b"]


def test_otel_without_opentelemetry_is_a_usage_error(tmp_path: Path, redis_server: RedisServer) -> None:
    blocked = tmp_path / "blocked" / "opentelemetry"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text("raise ImportError('opentelemetry is not installed')\n")
    env = {"PYTHONPATH": os.pathsep.join([str(blocked.parent), os.environ.get("PYTHONPATH", "")])}
    process = start(tmp_path, redis_server, "tasks:handle", "-q", "jobs", "--otel", env=env)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 3, stderr
    assert "pip install 'rwq[otel]'" in stderr
    assert "Traceback" not in stderr


@pytest.mark.parametrize("handler", ["tasks:stuck", "tasks:astuck"])
def test_a_second_sigterm_releases_the_items_in_hand_and_exits_143(
    tmp_path: Path, redis_server: RedisServer, r: redis.Redis, handler: str
) -> None:
    WorkQueue(r, "jobs").add_many([("a", b"x"), ("b", b"x")])
    process = start(tmp_path, redis_server, handler, "-q", "jobs", "-c", "2")
    try:
        deadline = time.monotonic() + 30
        while r.llen("started") < 2:
            assert time.monotonic() < deadline
            assert process.poll() is None
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        assert process.poll() is None  # the grace period: running handlers may finish
        forced = time.monotonic()
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=10)
    finally:
        process.kill()
    assert time.monotonic() - forced < 3
    assert process.returncode == 143, stderr
    counts = WorkQueue(r, "jobs").counts()
    assert (counts.queued, counts.processing) == (2, 0)
    assert "releasing the items in hand" in stderr
