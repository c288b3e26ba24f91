"""``rwq worker MODULE:CALLABLE``: run a handler as a worker process, the way rq, arq, celery and
dramatiq users start theirs.

Exit codes, for a process supervisor: 0 a clean stop (SIGTERM/SIGINT, or ``--burst`` found the
queue drained); 1 the worker crashed (Redis unusable at start, an unexpected error; once
running, Redis failures are logged and retried); 3 a usage error (bad option, a callable that
cannot be imported). A second signal forces the exit.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import logging
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click
import redis
import redis.asyncio
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.cluster import RedisCluster

from .aio import AsyncWorkQueue
from .aio_worker import AsyncWorker
from .cli_queue import cluster_option, shards_option, url_option
from .client import WorkQueue
from .errors import RwqError
from .sharded import AsyncShardedWorkQueue, ShardedWorkQueue
from .worker import Worker

BURST_CHECK_S = 0.2


class JsonFormatter(logging.Formatter):
    """One JSON object per log record: time, level, logger, message (and the traceback, if any)."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry)


def load_handler(spec: str) -> Callable[..., Any]:
    """The callable ``module:attribute`` names, importing ``module`` from the working directory too."""
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise click.UsageError(f"{spec!r} is not MODULE:CALLABLE (e.g. tasks:handle)")
    if "" not in sys.path:
        sys.path.insert(0, "")
    try:
        target: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise click.UsageError(f"cannot load {spec}: {type(exc).__name__}: {exc}") from exc
    if not callable(target):
        raise click.UsageError(f"{spec} is a {type(target).__name__}, not a callable")
    return target  # type: ignore[no-any-return]


@click.command("worker")
@click.argument("handler_spec", metavar="MODULE:CALLABLE")
@click.option("--prefix", "-q", required=True, help="The queue's key prefix.")
@url_option
@cluster_option
@click.option("--concurrency", "-c", type=click.IntRange(1, 10_000), default=1, show_default=True)
@click.option("--lease-ms", type=click.IntRange(2), default=30_000, show_default=True)
@click.option("--burst", is_flag=True, help="Exit once no item is ready or in flight (delayed retries stay).")
@click.option("--timeout-ms", type=click.IntRange(1), help="Fail an item whose handler runs longer.")
@click.option("--liveness-file", type=click.Path(dir_okay=False), help="Touched at each answered lease call.")
@click.option(
    "--flat-in-flight",
    is_flag=True,
    help="Profile flat: keep leases in <prefix>:in_flight (no redis-work-queue 0.1.x cleaners on the queue).",
)
@click.option(
    "--declared-keys",
    is_flag=True,
    help="Profile declared-keys: pass every key a script touches in KEYS (Dragonfly, key-routing proxies).",
)
@shards_option
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--log-level", type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"]), default="INFO")
def worker_command(
    *,
    handler_spec: str,
    prefix: str,
    url: str,
    cluster: bool,
    concurrency: int,
    lease_ms: int,
    burst: bool,
    timeout_ms: int | None,
    liveness_file: str | None,
    flat_in_flight: bool,
    declared_keys: bool,
    shards: int,
    log_format: str,
    log_level: str,
) -> None:
    """Run MODULE:CALLABLE on the items of a queue: a function taking a Job, or an async one
    taking an AsyncJob. Returning completes an item; raising retries it later, then dead-letters it.

    Exit codes: 0 clean stop (a signal, or --burst done); 1 crashed; 3 usage error.
    """
    handler = load_handler(handler_spec)
    stream = logging.StreamHandler()
    text = logging.Formatter("%(asctime)s %(levelname)s %(message)s")
    stream.setFormatter(JsonFormatter() if log_format == "json" else text)
    logging.basicConfig(level=log_level, handlers=[stream], force=True)
    run = Run(
        url,
        prefix,
        cluster,
        burst,
        concurrency,
        lease_ms,
        timeout_ms,
        liveness_file,
        flat_in_flight,
        shards,
        declared_keys,
    )
    try:
        if inspect.iscoroutinefunction(handler):
            asyncio.run(_run_async(handler, run))
        else:
            _run_sync(handler, run)
    except (RwqError, redis.RedisError, ValueError) as exc:
        logging.getLogger("rwq.worker").error("worker stopped: %s: %s", type(exc).__name__, exc)  # noqa: TRY400
        sys.exit(1)


@dataclass(frozen=True)
class Run:
    """What ``rwq worker`` was asked to run."""

    url: str
    prefix: str
    cluster: bool
    burst: bool
    concurrency: int
    lease_ms: int
    timeout_ms: int | None
    liveness_file: str | None
    flat_in_flight: bool = False
    shards: int = 0
    declared_keys: bool = False

    def queue_options(self) -> dict[str, Any]:
        """The queue's settings."""
        return {"flat_in_flight": self.flat_in_flight, "declared_keys": self.declared_keys}

    def options(self) -> dict[str, Any]:
        """The worker's settings."""
        return {
            "concurrency": self.concurrency,
            "lease_ms": self.lease_ms,
            "timeout_ms": self.timeout_ms,
            "liveness_file": self.liveness_file,
        }


def _run_sync(handler: Callable[..., Any], run: Run) -> None:
    client: Any = RedisCluster.from_url(run.url) if run.cluster else redis.Redis.from_url(run.url)
    queue: WorkQueue | ShardedWorkQueue = (
        ShardedWorkQueue(client, run.prefix, shards=run.shards, **run.queue_options())
        if run.shards
        else WorkQueue(client, run.prefix, **run.queue_options())
    )
    queue.counts()  # fail fast: a Redis that cannot be used at start is exit 1, not endless retries
    worker = Worker(queue, handler, **run.options())
    done = threading.Event()

    def watch() -> None:
        while not done.wait(BURST_CHECK_S):
            counts = queue.counts()
            if counts.queued == 0 and counts.processing == 0:
                worker.stop()
                return

    if run.burst:
        threading.Thread(target=watch, name="rwq-burst", daemon=True).start()
    with worker.install_signal_handlers():
        try:
            worker.run()
        finally:
            done.set()
            client.close()


async def _run_async(handler: Callable[..., Any], run: Run) -> None:
    client: Any = (
        AsyncRedisCluster.from_url(run.url) if run.cluster else redis.asyncio.Redis.from_url(run.url)
    )
    queue: AsyncWorkQueue | AsyncShardedWorkQueue = (
        AsyncShardedWorkQueue(client, run.prefix, shards=run.shards, **run.queue_options())
        if run.shards
        else AsyncWorkQueue(client, run.prefix, **run.queue_options())
    )
    await queue.counts()
    worker = AsyncWorker(queue, handler, **run.options())

    async def watch() -> None:
        while True:
            await asyncio.sleep(BURST_CHECK_S)
            counts = await queue.counts()
            if counts.queued == 0 and counts.processing == 0:
                worker.stop()
                return

    watcher = asyncio.create_task(watch()) if run.burst else None
    with worker.install_signal_handlers():
        try:
            await worker.run()
        finally:
            if watcher is not None:
                watcher.cancel()
            await client.aclose()
