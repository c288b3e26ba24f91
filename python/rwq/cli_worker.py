"""``rwq worker MODULE:CALLABLE``: run a handler as a worker process, the way rq, arq, celery and
dramatiq users start theirs.

Exit codes, for a process supervisor: 0 a clean stop (SIGTERM/SIGINT, or ``--burst`` found the
queue drained); 1 the worker crashed (Redis unusable at start, an unexpected error; once
running, Redis failures are logged and retried); 3 a usage error (bad option, a callable that
cannot be imported); 128+N (143 for SIGTERM, 130 for SIGINT) a forced stop: a second signal
during the graceful stop releases the items in hand at once and exits.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import click
import redis
import redis.asyncio
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.cluster import RedisCluster

from ._shell import FAILURES
from .aio import AsyncWorkQueue
from .aio_worker import AsyncWorker
from .cli_queue import (
    cluster_option,
    redacted,
    shards_option,
    unknown_url_option,
    url_option,
    url_option_error,
)
from .client import WorkQueue
from .errors import RwqError
from .handlers import handler_kind
from .periodic import AsyncScheduler, Scheduler
from .sharded import AsyncShardedWorkQueue, ShardedWorkQueue
from .worker import Worker, WorkerEvent

# The attributes every LogRecord has; any other one came from ``extra`` (a job's fields).
_RECORD_FIELDS = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """One JSON object per log record: time, level, logger, message, the record's ``extra``
    fields (a settled job's queue, id, attempt, duration_ms, outcome) and the traceback, if any."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created).astimezone().isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update((key, value) for key, value in vars(record).items() if key not in _RECORD_FIELDS)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class Redacting(logging.Formatter):
    """Another formatter's lines with the passwords of the Redis URL masked, whatever logged them."""

    def __init__(self, inner: logging.Formatter, url: str) -> None:
        super().__init__()
        self.inner, self.url = inner, url

    def format(self, record: logging.LogRecord) -> str:
        return redacted(self.inner.format(record), self.url)


def otel_hook() -> Callable[[WorkerEvent], object]:
    """``rwq.otel``'s hook, or a usage error when the otel extra is not installed."""
    try:
        from .otel import OTelEvents  # noqa: PLC0415 - the otel extra, only with --otel
    except ImportError as exc:
        raise click.UsageError(
            f"--otel needs OpenTelemetry: pip install 'rwq[otel]' ({type(exc).__name__}: {exc})"
        ) from exc
    return OTelEvents()


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
    try:
        handler_kind(target)  # InvalidType for a generator function, here before any I/O
    except RwqError as exc:
        raise click.UsageError(f"{spec}: {exc}") from exc
    return target  # type: ignore[no-any-return]


@click.command("worker")
@click.argument("handler_spec", metavar="MODULE:CALLABLE")
@click.option("--prefix", "-q", required=True, help="The queue's key prefix.")
@url_option
@cluster_option
@click.option("--concurrency", "-c", type=click.IntRange(1, 10_000), default=1, show_default=True)
@click.option("--lease-ms", type=click.IntRange(2), default=30_000, show_default=True)
@click.option(
    "--burst", is_flag=True, help="Exit once no item is ready and none is in hand (delayed retries stay)."
)
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
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: one object per line, warnings included, with each settled job's fields.",
)
@click.option("--log-level", type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"]), default="INFO")
@click.option("--otel", is_flag=True, help="OpenTelemetry metrics and spans per item (the otel extra).")
@click.option(
    "--scheduler",
    is_flag=True,
    help="Also fire the queue's schedules (profile periodic) beside the worker (rwq acl worker scheduler).",
)
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
    otel: bool,
    scheduler: bool,
) -> None:
    """Run MODULE:CALLABLE on the items of a queue: a function taking a Job, or an async one
    (async def, an object with async def __call__, or a partial of either) taking an AsyncJob.
    Returning completes an item; raising retries it later, then dead-letters it. It runs as the
    user that `rwq acl worker` prints.

    \b
    Exit codes:
      0        a clean stop (SIGTERM/SIGINT, or --burst found nothing more to do)
      1        crashed (Redis unusable at start, an unexpected error)
      3        usage error (bad option, a callable that cannot be loaded, --otel without OpenTelemetry)
      128+N    forced by a second signal N during the stop (143 SIGTERM, 130 SIGINT): the items in
               hand were released at once
    """
    stream = logging.StreamHandler()
    text = logging.Formatter("%(asctime)s %(levelname)s %(message)s")
    stream.setFormatter(Redacting(JsonFormatter() if log_format == "json" else text, url))
    logging.basicConfig(level=log_level, handlers=[stream], force=True)
    logging.captureWarnings(
        True
    )  # the server check's warnings (and the handler module's), in the same format
    handler = load_handler(handler_spec)
    on_event = otel_hook() if otel else None
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
        on_event,
        scheduler,
    )
    try:
        forced = (
            asyncio.run(_run_async(handler, run))
            if handler_kind(handler) == "async"
            else _run_sync(handler, run)
        )
    except (RwqError, ValueError, *FAILURES) as exc:
        logging.getLogger("rwq.worker").error("worker stopped: %s: %s", type(exc).__name__, exc)  # noqa: TRY400
        sys.exit(1)
    except TypeError as exc:
        if not unknown_url_option(exc):
            raise
        logging.getLogger("rwq.worker").error("worker stopped: %s", url_option_error(exc))  # noqa: TRY400
        sys.exit(1)
    if forced is not None:
        sys.exit(128 + forced)


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
    on_event: Callable[[WorkerEvent], object] | None = None
    scheduler: bool = False

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
            "burst": self.burst,
            "on_event": self.on_event,
        }


def _run_sync(handler: Callable[..., Any], run: Run) -> int | None:
    """Run a Worker; the signal that forced its stop, if one did."""
    client: Any = RedisCluster.from_url(run.url) if run.cluster else redis.Redis.from_url(run.url)
    queue: WorkQueue | ShardedWorkQueue = (
        ShardedWorkQueue(client, run.prefix, shards=run.shards, **run.queue_options())
        if run.shards
        else WorkQueue(client, run.prefix, **run.queue_options())
    )
    worker = Worker(queue, handler, **run.options())
    scheduler = _scheduler(queue, run)
    queue.retry_policy()  # fail fast (exit 1, not endless retries) with a read the worker role has
    thread = threading.Thread(target=scheduler.run, name="rwq-scheduler") if scheduler else None
    with worker.install_signal_handlers():
        try:
            if thread:
                thread.start()
            worker.run()
        finally:
            if scheduler and thread:
                scheduler.stop()
                thread.join()
            client.close()
    return worker.forced_by


def _scheduler(queue: Any, run: Run) -> Any:
    """The scheduler that ``--scheduler`` runs beside the worker, or None."""
    if not run.scheduler:
        return None
    if run.shards:
        raise click.UsageError("--scheduler: no schedules on a sharded queue yet (RWQ-SCHED-016)")
    return (AsyncScheduler if isinstance(queue, AsyncWorkQueue) else Scheduler)(queue)


async def _run_async(handler: Callable[..., Any], run: Run) -> int | None:
    """Run an AsyncWorker; the signal that forced its stop, if one did."""
    client: Any = (
        AsyncRedisCluster.from_url(run.url) if run.cluster else redis.asyncio.Redis.from_url(run.url)
    )
    queue: AsyncWorkQueue | AsyncShardedWorkQueue = (
        AsyncShardedWorkQueue(client, run.prefix, shards=run.shards, **run.queue_options())
        if run.shards
        else AsyncWorkQueue(client, run.prefix, **run.queue_options())
    )
    worker = AsyncWorker(queue, handler, **run.options())
    scheduler = _scheduler(queue, run)
    await queue.retry_policy()
    with worker.install_signal_handlers():
        task = asyncio.create_task(scheduler.run()) if scheduler else None
        try:
            await worker.run()
        finally:
            if scheduler and task:
                scheduler.stop()
                await task
            await client.aclose()
    return worker.forced_by
