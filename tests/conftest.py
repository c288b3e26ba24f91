"""Shared fixtures: every test session starts its own redis-server on a free loopback port."""

from __future__ import annotations

import io
import shlex
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis
import redis.asyncio as aioredis
from rich.console import Console

from rwq import AsyncWorkQueue, WorkQueue
from rwq.conformance.cluster import LocalCluster
from rwq.conformance.redis_server import RedisServer, faketime_available
from rwq.conformance.runner import RunConfig, run


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A real redis-server for the whole test session (never a shared or default instance)."""
    with RedisServer() as server:
        yield server


@pytest.fixture(scope="session")
def reference_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path, str]:
    """One run of the whole suite (the workload included) against the reference adapter, shared
    by the tests that read its report: (exit code, output directory, terminal text)."""
    out = tmp_path_factory.mktemp("reference") / "out"
    buffer = io.StringIO()
    adapter = f"{shlex.quote(sys.executable)} -m rwq.conformance.reference_adapter"
    code = run(RunConfig(adapter=adapter, out=out, workload=True, console=Console(file=buffer, width=200)))
    return code, out, buffer.getvalue()


@pytest.fixture(scope="session")
def frozen_server() -> Iterator[RedisServer]:
    """A redis-server whose clock stands still until the test calls ``advance(ms)``."""
    if not faketime_available():
        pytest.fail("libfaketime and libtcmalloc-minimal4 are required (make test installs them)")
    with RedisServer(frozen_clock=True) as server:
        yield server


@pytest.fixture
def r(redis_server: RedisServer) -> Iterator[redis.Redis]:
    """A client of the session server, on an empty database."""
    client = redis_server.client()
    client.flushall()
    yield client
    client.close()


@pytest.fixture
def prefix() -> str:
    """A fresh, hash-tagged queue prefix."""
    return f"test:{{{uuid.uuid4().hex[:12]}}}"


@pytest.fixture
def queue(r: redis.Redis, prefix: str) -> WorkQueue:
    return WorkQueue(r, prefix)


@pytest.fixture
async def ar(redis_server: RedisServer) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis(host="127.0.0.1", port=redis_server.port)
    await client.flushall()
    yield client
    await client.aclose()


@pytest.fixture
def aqueue(ar: aioredis.Redis, prefix: str) -> AsyncWorkQueue:
    return AsyncWorkQueue(ar, prefix)


@pytest.fixture
def fr(frozen_server: RedisServer) -> Iterator[redis.Redis]:
    """A client of the frozen-clock server, on an empty database."""
    client = frozen_server.client()
    client.flushall()
    yield client
    client.close()


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    """A 3-master Redis Cluster on loopback, one per test module that asks for it."""
    nodes = LocalCluster().start()
    try:
        yield nodes
    finally:
        nodes.stop()
