"""pytest fixtures for services that use rwq (the ``testing`` extra; pytest loads it by itself).

- ``rwq_redis_url`` (session): a real Redis for the test session: ``$RWQ_TEST_REDIS_URL``, else a
  ``redis-server`` this plugin starts on a free loopback port (``$RWQ_REDIS_SERVER`` or PATH),
  else, with the ``containers`` extra and a Docker engine, a testcontainers Redis.
- ``rwq_queue``: a :class:`~rwq.WorkQueue` with a prefix of its own for each test, its keys
  deleted afterwards.
- :func:`drain`: run a :class:`~rwq.Worker` on a queue until it finds nothing more to do; the
  handler's first exception is raised again in the test (``raise_errors=False``: count it in
  the stats instead). :func:`adrain` is its asyncio twin, for an :class:`~rwq.AsyncWorkQueue` and
  an async handler (``AsyncWorkQueue(redis.asyncio.Redis.from_url(rwq_redis_url),
  rwq_queue.prefix)`` gives one on the test's own queue).

A handler of the wrong kind (an async one for ``drain``, a plain one for ``adrain``) is refused
with :class:`~rwq.errors.InvalidType` before anything runs.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
import redis

from .aio import AsyncWorkQueue
from .aio_worker import AsyncJob, AsyncWorker
from .client import WorkQueue
from .conformance.redis_server import RedisServer, RedisUnavailable
from .handlers import require_kind
from .sharded import AsyncShardedWorkQueue, ShardedWorkQueue
from .worker import Job, Worker, WorkerStats

__all__ = ["adrain", "drain", "rwq_queue", "rwq_redis_url"]
DRAIN_POLL_MS = 100


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


class _FirstError:
    """An ``on_error`` hook that keeps the handler's first exception, then calls ``then``."""

    def __init__(self, then: Callable[[Any, BaseException], object] | None) -> None:
        self.then = then
        self.first: BaseException | None = None

    def __call__(self, job: Any, exc: BaseException) -> None:
        if self.first is None:
            self.first = exc
        if self.then is not None:
            self.then(job, exc)

    def raise_first(self) -> None:
        """Raise the first exception, if any."""
        if self.first is not None:
            raise self.first


def drain(
    queue: WorkQueue | ShardedWorkQueue,
    handler: Callable[[Job], object],
    *,
    timeout_s: float = 10.0,
    raise_errors: bool = True,
    **options: Any,
) -> WorkerStats:
    """Run a :class:`~rwq.Worker` (``options`` are its settings) with ``burst`` until a lease finds
    nothing while it holds nothing; its stats. The handler's first exception is raised again
    once the worker stopped (``raise_errors=False``: only counted in ``stats.failed``).
    Raises TimeoutError after ``timeout_s``, once the worker stopped."""
    require_kind(handler, "sync", "drain", instead="adrain")
    errors = _FirstError(options.pop("on_error", None))
    settings = {"poll_timeout_ms": DRAIN_POLL_MS, **options, "burst": True, "on_error": errors}
    worker = Worker(queue, handler, **settings)
    crashed: list[BaseException] = []

    def run() -> None:
        try:
            worker.run()
        except BaseException as exc:  # raised again in the test's thread
            crashed.append(exc)

    thread = threading.Thread(target=run, name="rwq-drain", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        worker.stop()
        thread.join(timeout_s)
        raise TimeoutError(f"the worker still found items after {timeout_s} s: {worker.stats}")
    if crashed:
        raise crashed[0]
    if raise_errors:
        errors.raise_first()
    return worker.stats


async def adrain(
    queue: AsyncWorkQueue | AsyncShardedWorkQueue,
    handler: Callable[[AsyncJob], Awaitable[object]],
    *,
    timeout_s: float = 10.0,
    raise_errors: bool = True,
    **options: Any,
) -> WorkerStats:
    """:func:`drain` for asyncio: an :class:`~rwq.AsyncWorker` with ``burst`` on ``queue``."""
    require_kind(handler, "async", "adrain", instead="drain")
    errors = _FirstError(options.pop("on_error", None))
    settings = {"poll_timeout_ms": DRAIN_POLL_MS, **options, "burst": True, "on_error": errors}
    worker = AsyncWorker(queue, handler, **settings)
    running = asyncio.ensure_future(worker.run())
    done, _ = await asyncio.wait([running], timeout=timeout_s)
    if not done:
        worker.stop()
        await asyncio.wait([running], timeout=timeout_s)
        raise TimeoutError(f"the worker still found items after {timeout_s} s: {worker.stats}")
    running.result()
    if raise_errors:
        errors.raise_first()
    return worker.stats
