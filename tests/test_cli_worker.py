"""``rwq worker MODULE:CALLABLE`` as a supervisor runs it: a real process, a real Redis, its exit codes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from rwq import WorkQueue
from rwq.conformance.redis_server import RedisServer
from rwq.sharded import ShardedWorkQueue

TASKS = """
import os, redis
r = redis.Redis.from_url(os.environ["RWQ_URL"])

def handle(job):
    r.rpush("done", job.id)

async def handle_async(job):
    r.rpush("done", job.id)

def handle_flat(job):
    in_flight = r.zscore("jobs:in_flight", job.id) is not None
    r.rpush("done", job.id if in_flight else "not in jobs:in_flight")

def handle_gen(job):
    r.rpush("done", job.id)
    yield

async def handle_agen(job):
    r.rpush("done", job.id)
    yield

def fail_on_b(job):
    if job.id == "b":
        raise ValueError("b is broken")
    r.rpush("done", job.id)
"""


def _worker(tmp_path: Path, server: RedisServer, *args: str) -> subprocess.Popen[str]:
    (tmp_path / "tasks.py").write_text(TASKS)
    env = {**os.environ, "RWQ_URL": server.url}
    command = [sys.executable, "-m", "rwq.console", "worker", *args]
    return subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("handler", ["tasks:handle", "tasks:handle_async"])
def test_burst_drains_the_queue_then_exits_0(
    tmp_path: Path, redis_server: RedisServer, r: redis.Redis, handler: str
) -> None:
    WorkQueue(r, "jobs").add_many([(f"i{n}", b"x") for n in range(50)])
    process = _worker(tmp_path, redis_server, handler, "--prefix", "jobs", "--burst", "-c", "4")
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert sorted(r.lrange("done", 0, -1)) == sorted(f"i{n}".encode() for n in range(50))
    counts = WorkQueue(r, "jobs").counts()
    assert (counts.queued, counts.processing) == (0, 0)


def test_flat_in_flight_leases_into_the_sorted_set(
    tmp_path: Path, redis_server: RedisServer, r: redis.Redis
) -> None:
    """``--flat-in-flight`` (profile flat): each handler finds its item in ``jobs:in_flight``."""
    WorkQueue(r, "jobs").add_many([(f"i{n}", b"x") for n in range(20)])
    process = _worker(
        tmp_path, redis_server, "tasks:handle_flat", "-q", "jobs", "--burst", "--flat-in-flight"
    )
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert sorted(r.lrange("done", 0, -1)) == sorted(f"i{n}".encode() for n in range(20))
    assert r.exists("jobs:in_flight", "jobs:processing") == 0


@pytest.mark.parametrize("handler", ["tasks:handle", "tasks:handle_async"])
def test_shards_drains_every_shard(
    tmp_path: Path, redis_server: RedisServer, r: redis.Redis, handler: str
) -> None:
    """``--shards`` (profile sharded): the worker leases from every shard of the queue."""
    ShardedWorkQueue(r, "sh", shards=4).add_many([(f"i{n}", b"x") for n in range(40)])
    process = _worker(tmp_path, redis_server, handler, "-q", "sh", "--shards", "4", "--burst", "-c", "3")
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert sorted(r.lrange("done", 0, -1)) == sorted(f"i{n}".encode() for n in range(40))
    counts = ShardedWorkQueue(r, "sh", shards=4).counts()
    assert (counts.queued, counts.processing) == (0, 0)
    mismatch = _worker(tmp_path, redis_server, handler, "-q", "sh", "--shards", "5", "--burst")
    _, stderr = mismatch.communicate(timeout=60)
    assert mismatch.returncode == 1
    assert "ShardMismatch" in stderr


def test_a_failing_item_is_retried_later_and_burst_still_ends(
    tmp_path: Path, redis_server: RedisServer, r: redis.Redis
) -> None:
    WorkQueue(r, "jobs").add_many([("a", b"x"), ("b", b"x")])
    process = _worker(
        tmp_path, redis_server, "tasks:fail_on_b", "-q", "jobs", "--burst", "--log-format", "json"
    )
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert r.lrange("done", 0, -1) == [b"a"]
    counts = WorkQueue(r, "jobs").counts()
    assert counts.delayed + counts.queued == 1  # b waits out its backoff (or was due, and given back)
    assert counts.processing == 0
    assert '"level": "ERROR"' in stderr  # the failure, logged as JSON
    assert "b is broken" in stderr


def test_sigterm_stops_a_worker_cleanly(tmp_path: Path, redis_server: RedisServer, r: redis.Redis) -> None:
    alive = tmp_path / "alive"
    args = ("tasks:handle", "--prefix", "jobs", "--liveness-file", str(alive), "--timeout-ms", "60000")
    process = _worker(tmp_path, redis_server, *args)
    deadline = time.monotonic() + 30
    while not alive.exists():  # started, and Redis answers its lease calls
        assert time.monotonic() < deadline
        assert process.poll() is None
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    assert "SIGTERM: stopping gracefully" in stderr


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nosuchmodule:handle", "No module named"),
        ("tasks:missing", "has no attribute"),
        ("tasks", "MODULE:CALLABLE"),
        ("tasks:handle_gen", "is a generator function"),
        ("tasks:handle_agen", "is an async generator function"),
    ],
)
def test_a_bad_callable_is_a_usage_error(
    tmp_path: Path, redis_server: RedisServer, r: redis.Redis, spec: str, message: str
) -> None:
    """Refused before any I/O: a generator function would have its items completed unrun."""
    process = _worker(tmp_path, redis_server, spec, "--prefix", "jobs")
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 3
    assert message in stderr
    assert "Traceback" not in stderr
    assert r.keys("*") == []


def test_an_unreachable_redis_is_exit_1(tmp_path: Path) -> None:
    (tmp_path / "tasks.py").write_text("def handle(job):\n    pass\n")
    command = [
        sys.executable,
        "-m",
        "rwq.console",
        "worker",
        "tasks:handle",
        "-q",
        "jobs",
        "--url",
        "redis://127.0.0.1:1/0",
    ]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert "worker stopped" in done.stderr


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_no_log_line_shows_the_urls_password(tmp_path: Path, log_format: str) -> None:
    """Whatever logs the URL (here the handler module, at import), the password is masked, in
    the userinfo and in a ``password=`` parameter alike (#21 §11)."""
    url = "redis://worker:s3cr%40t@127.0.0.1:1/0?password=an0ther"
    (tmp_path / "tasks.py").write_text(
        "import logging, os\nlogging.getLogger('tasks').warning('using %s', os.environ['RWQ_URL'])\n"
        "def handle(job):\n    pass\n"
    )
    command = [sys.executable, "-m", "rwq.console", "worker", "tasks:handle", "-q", "jobs"]
    command += ["--log-format", log_format]
    env = {**os.environ, "RWQ_URL": url}
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1
    assert "using redis://worker:***@127.0.0.1:1/0?password=***" in done.stderr
    for secret in ("s3cr%40t", "s3cr@t", "an0ther"):
        assert secret not in done.stderr


@pytest.mark.parametrize(
    ("options", "query", "said"),
    [
        (["--cluster", "-q", "{jobs}"], "", "Cluster mode is not enabled"),
        (["-q", "jobs"], "?Password=hunter22", "'Password'"),
    ],
)
def test_a_redis_that_cannot_be_used_is_one_line_and_exit_1(
    tmp_path: Path, redis_server: RedisServer, options: list[str], query: str, said: str
) -> None:
    """A cluster flag against a plain Redis, or a URL option redis-py does not know, ends in one
    error line and exit 1, not a traceback (red team B6c)."""
    (tmp_path / "tasks.py").write_text("def handle(job):\n    pass\n")
    url = redis_server.url + query
    command = [sys.executable, "-m", "rwq.console", "worker", "tasks:handle", *options, "--url", url]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1, done.stderr
    assert said in done.stderr
    assert "hunter22" not in done.stderr
