"""pytest fixtures for services that use rwq (the ``testing`` extra; pytest loads it by itself).

- ``rwq_redis_url`` (session): a real Redis for the test session: ``$RWQ_TEST_REDIS_URL``, else a
  ``redis-server`` this plugin starts on a free loopback port (``$RWQ_REDIS_SERVER`` or PATH),
  else, with the ``containers`` extra and a Docker engine, a testcontainers Redis.
- ``rwq_queue``: a :class:`~rwq.WorkQueue` with a prefix of its own for each test, its keys
  deleted afterwards.
- :func:`drain`: run a worker on a queue until nothing is ready or in flight.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis

from .client import WorkQueue
from .conformance.redis_server import RedisServer, RedisUnavailable
from .worker import Job, Worker, WorkerStats

__all__ = ["drain", "rwq_queue", "rwq_redis_url"]


@pytest.fixture(scope="session")
def rwq_redis_url() -> Iterator[str]:
    """The URL of a real Redis for this test session."""
    given = os.environ.get("RWQ_TEST_REDIS_URL")
    if given:
        yield given
        return
    try:
        server = RedisServer().start()
    except RedisUnavailable as missing:
        yield from _container(missing)
        return
    try:
        yield server.url
    finally:
        server.stop()


def _container(missing: RedisUnavailable) -> Iterator[str]:
    """A testcontainers Redis, when there is no redis-server here but Docker is."""
    try:
        from testcontainers.redis import RedisContainer  # noqa: PLC0415 - the containers extra
    except ImportError:
        raise RedisUnavailable(
            f"{missing}; or install the containers extra (pip install 'rwq[containers]') and run Docker, "
            "or set RWQ_TEST_REDIS_URL"
        ) from missing
    with RedisContainer() as container:
        host, port = container.get_container_host_ip(), container.get_exposed_port(6379)
        yield f"redis://{host}:{port}/0"


@pytest.fixture
def rwq_queue(rwq_redis_url: str) -> Iterator[WorkQueue]:
    """A queue of its own for one test (prefix ``test:{<random>}``), cleaned up afterwards."""
    client = redis.Redis.from_url(rwq_redis_url)
    queue = WorkQueue(client, f"test:{{{secrets.token_hex(6)}}}")
    try:
        yield queue
    finally:
        keys = list(client.scan_iter(match=f"{queue.prefix}:*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()


def drain(
    queue: WorkQueue, handler: Callable[[Job], object], *, timeout_s: float = 10.0, **options: Any
) -> WorkerStats:
    """Run a :class:`~rwq.Worker` (``options`` are its settings) until no item of ``queue`` is ready
    or in flight, then stop it; its stats. Raises TimeoutError after ``timeout_s``."""
    worker = Worker(queue, handler, **{"poll_timeout_ms": 100, **options})
    thread = threading.Thread(target=worker.run, name="rwq-drain", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            counts = queue.counts()
            if counts.queued == 0 and counts.processing == 0:
                break
            if time.monotonic() > deadline or not thread.is_alive():
                raise TimeoutError(f"the queue still holds {counts} after {timeout_s} s")
            time.sleep(0.02)
    finally:
        worker.stop()
        thread.join(timeout_s)
    return worker.stats
