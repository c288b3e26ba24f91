"""The worker helper for services: :class:`Worker` runs a handler on leased items in threads.

A worker runs ``concurrency`` slots. Each slot leases one item at a time with a blocking lease
that waits at most ``poll_timeout_ms``, runs the handler on it, then completes it as its lease
holder and leases the next ready item in the same round trip (``complete_and_lease``; the
handler returned) or records a failed attempt (the handler raised): the item is retried after
the queue's backoff, or dead-lettered once its attempts are used up. Safe by default: when the
queue has no retry policy, the worker stores :data:`DEFAULT_RETRY` at start (only if none is
there, so an operator's policy stays), and every worker runs a light clean about once per lease
time, so that the item of a crashed worker comes back. One renewer extends
every held lease every ``renew_interval_ms`` in a single round trip; a lease it finds lost is
flagged on the job and never completed as if still owned. Redis failures are logged and retried
with bounded exponential backoff until the worker is stopped.

Graceful shutdown (:meth:`Worker.stop`, or SIGTERM/SIGINT inside
:meth:`Worker.install_signal_handlers`): stop leasing at once, let running handlers finish
for up to ``shutdown_grace_ms``, release the items of those still running, and return.
:meth:`Worker.halt` (or a second signal) ends the grace period at once.
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import enum
import logging
import os
import random
import signal
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Final, Literal

from .client import WorkQueue
from .errors import (
    InvalidArgument,
    InvalidType,
    LeaseLost,
    NonRetryable,
    NoPermission,
    PolicyMissing,
    RedisFailure,
    RetryLater,
    RwqError,
    ShardCountUnrecorded,
)
from .handlers import HandlerKind, checked_sync, require_kind
from .protocol import live, validation
from .protocol.live import Beat
from .protocol.operations import MAX_DETAIL_BYTES, FailOutcome, Lease, Outcome, RetryPolicy
from .sharded import ShardedWorkQueue

__all__ = ["DEFAULT_RETRY", "Job", "Worker", "WorkerEvent", "WorkerHealth", "WorkerStats"]

LOGGER = logging.getLogger("rwq.worker")
BACKOFF_BASE_MS = 100
BACKOFF_CAP_MS = 5_000
SIGNALS = (signal.SIGTERM, signal.SIGINT)
MAX_CONCURRENCY = 10_000
DEFAULT_RETRY = RetryPolicy(jitter_pct=25)
"""The policy a worker stores when the queue has none: 5 attempts, then the dead set (kept 7 days,
at most 10,000); between attempts 1 s, 2 s, 4 s, 8 s, each shortened by up to 25 % at random."""
FALLBACK_DELAY_MS = 1000
"""A failed item's delay when the queue has no retry policy (RWQ-WORKER-002): never a hot loop. On a
queue that had none at the worker's start, a shorter delay a RetryLater asks for is raised to it."""
LEASE_MS: Final = "lease_ms"  # clean_interval_ms's default: one light clean per lease time
CLEAN_JITTER = 0.25  # each pause between light cleans is the interval +-25 %, so workers spread out
BURST_PAUSE_S = 0.05  # burst: a slot that found nothing looks again after this, while others work
CHECK_S = 0.05  # how often a waiting thread checks for a stop (or the shutdown for a halt)

_Settled = Literal["completed", "failed", "released", "lost"]
EventKind = Literal["leased", "completed", "failed", "dead", "released", "lost"]


@dataclass(frozen=True, slots=True)
class WorkerStats:
    """How the worker's jobs ended; each leased item is counted once.

    ``completed``: the handler returned and the worker completed the item as its lease holder.
    ``failed``: the handler raised and the item was released for another attempt.
    ``released``: given back unfinished at shutdown (or leased just as the worker was stopped).
    ``lost``: the lease was lost before the job was settled; another worker may run the item.
    """

    completed: int = 0
    failed: int = 0
    released: int = 0
    lost: int = 0


@dataclass(frozen=True, slots=True)
class WorkerHealth:
    """A worker's liveness, for an operator's probe: ``redis_age_s``, the seconds since its last
    successful lease call (None before the first; a healthy worker makes one at least every
    ``poll_timeout_ms``), ``in_hand``, the items its handlers hold, and ``stopping``."""

    redis_age_s: float | None
    in_hand: int
    stopping: bool


@dataclass(frozen=True, slots=True)
class WorkerEvent:
    """What happened to one item in a worker, for ``on_event`` (metrics, tracing).

    ``kind``: ``leased`` (the handler starts), ``completed``, ``failed`` (retried later), ``dead``
    (a failure that dead-lettered it), ``released`` (given back at shutdown) or ``lost`` (the
    lease was gone before the item was settled). ``duration_ms``: from lease to settle (None for
    ``leased``); ``error``: the handler's exception type when it raised.
    """

    kind: EventKind
    queue: str
    item_id: str
    attempt: int
    duration_ms: int | None = None
    error: str | None = None


class _State(enum.Enum):
    RUNNING = "running"  # the handler runs; the renewer flags a lost lease
    SETTLING = "settling"  # the slot completes or releases the item
    ABANDONED = "abandoned"  # the grace period ended; shutdown released the item
    TIMED_OUT = "timed out"  # the handler ran past timeout_ms; the watchdog failed the item
    WAITING = "waiting"  # leased again while a run of its id still goes on here; renewed, not started


class _JobBase:
    """A leased item in a handler's hands."""

    __slots__ = (
        "_dead",
        "_dead_now",
        "_detail",
        "_error",
        "_failure",
        "_retry_in",
        "_started",
        "_state",
        "lease",
    )

    def __init__(self, lease: Lease) -> None:
        self.lease = lease
        self._state = _State.RUNNING
        self._failure = ""
        self._detail = ""  # the handler's traceback, kept with a dead item
        self._dead_now = False  # the handler raised NonRetryable
        self._retry_in: int | None = None  # the delay a RetryLater asked for
        self._error: str | None = None  # the handler's exception type, if it raised
        self._dead = False  # its failure dead-lettered it
        self._started = time.monotonic()

    @property
    def id(self) -> str:
        return self.lease.id

    @property
    def data(self) -> bytes:
        return self.lease.data


def failure_reason(exc: BaseException) -> str:
    """The reason a failed attempt records: the exception, cut to the 1024 bytes a reason holds.
    An exception whose ``str()`` fails gives its type name and a note instead; never raises."""
    try:
        text = f"{type(exc).__name__}: {exc}"
    except Exception as error:  # the handler's exception is user code
        text = f"{type(exc).__name__}: <str() of the exception failed: {type(error).__name__}>"
    return text.encode("utf-8", "replace")[:1024].decode("utf-8", "ignore")


def failure_detail(exc: BaseException) -> str:
    """The detail a failed attempt keeps with a dead item: the formatted traceback, its last
    8192 bytes (where the exception and the innermost frames are), cut at a character boundary.
    Never raises: a traceback that cannot be formatted gives the reason and a note."""
    try:
        formatted = "".join(traceback.format_exception(exc))
    except Exception as error:  # the handler's exception is user code
        formatted = f"{failure_reason(exc)}\n<its traceback could not be formatted: {type(error).__name__}>"
    text = formatted.encode("utf-8", "replace")
    if len(text) > MAX_DETAIL_BYTES:
        text = b"...\n" + text[-(MAX_DETAIL_BYTES - 4) :]
    return text.decode("utf-8", "ignore")


class Job(_JobBase):
    """A leased item: ``id``, ``data``, the ``lease``, and ``lost``, an event set once this worker
    no longer holds the lease (a renewal found it lost, or shutdown released it): stop if you can.
    """

    __slots__ = ("lost",)

    def __init__(self, lease: Lease) -> None:
        super().__init__(lease)
        self.lost = threading.Event()

    def __repr__(self) -> str:
        return f"Job(id={self.id!r}, lost={self.lost.is_set()})"


class _Backoff:
    """Bounded exponential backoff with jitter: about 0.1 s, doubling up to 5 s."""

    def __init__(self) -> None:
        self._failures = 0

    def next_s(self) -> float:
        delay_ms = min(BACKOFF_CAP_MS, BACKOFF_BASE_MS << min(self._failures, 16))
        self._failures += 1
        return delay_ms * random.uniform(0.5, 1.0) / 1000

    def reset(self) -> None:
        self._failures = 0


class _WorkerBase(abc.ABC):
    """Settings, stats and signal handling shared by :class:`Worker` and ``AsyncWorker``."""

    def __init__(
        self,
        *,
        queue: object,
        queue_types: tuple[type, ...],
        handler: object,
        kind: HandlerKind,
        on_error: object,
        concurrency: int,
        lease_ms: int,
        renew_interval_ms: int | None,
        poll_timeout_ms: int,
        clean_interval_ms: int | Literal["lease_ms"] | None,
        shutdown_grace_ms: int,
        retry: RetryPolicy | None,
        on_event: Callable[[WorkerEvent], object] | None,
        timeout_ms: int | None,
        liveness_file: str | os.PathLike[str] | None,
        logger: logging.Logger | None,
        burst: bool,
        heartbeat_ms: int | None = live.BEAT_MS,
        heartbeat_ttl_ms: int = live.TTL_MS,
    ) -> None:
        if not isinstance(queue, queue_types):
            names = " or ".join(kind.__name__ for kind in queue_types)
            raise InvalidType(f"queue must be a {names}, not {type(queue).__name__}")
        if not callable(handler):
            raise InvalidType(f"handler must be callable, not {type(handler).__name__}")
        require_kind(handler, kind, type(self).__name__)
        if on_error is not None and not callable(on_error):
            raise InvalidType(f"on_error must be callable or None, not {type(on_error).__name__}")
        if logger is not None and not isinstance(logger, logging.Logger):
            raise InvalidType(f"logger must be a logging.Logger or None, not {type(logger).__name__}")
        if retry is not None and not isinstance(retry, RetryPolicy):
            raise InvalidType(f"retry must be a RetryPolicy or None, not {type(retry).__name__}")
        if on_event is not None and not callable(on_event):
            raise InvalidType(f"on_event must be callable or None, not {type(on_event).__name__}")
        if liveness_file is not None and not isinstance(liveness_file, (str, os.PathLike)):
            raise InvalidType(f"liveness_file must be a path or None, not {type(liveness_file).__name__}")
        self.liveness_file = None if liveness_file is None else Path(liveness_file)
        self._last_contact: float | None = None
        self.retry = retry
        self.on_event = on_event
        self.timeout_ms = None if timeout_ms is None else validation.duration_ms(timeout_ms, "timeout_ms")
        self.concurrency = validation.integer(concurrency, "concurrency", 1, MAX_CONCURRENCY)
        self.lease_ms = validation.duration_ms(lease_ms, "lease_ms", minimum=2)
        renew = lease_ms // 3 if renew_interval_ms is None else renew_interval_ms
        self.renew_interval_ms = validation.duration_ms(renew, "renew_interval_ms")
        if self.renew_interval_ms >= lease_ms:
            raise InvalidArgument("renew_interval_ms must be shorter than lease_ms")
        self.poll_timeout_ms = validation.duration_ms(poll_timeout_ms, "poll_timeout_ms")
        if clean_interval_ms == LEASE_MS:
            clean_interval_ms = lease_ms
        self.clean_interval_ms = (
            None
            if clean_interval_ms is None
            else validation.duration_ms(clean_interval_ms, "clean_interval_ms")
        )
        self.shutdown_grace_ms = validation.duration_ms(shutdown_grace_ms, "shutdown_grace_ms", minimum=0)
        self.burst = validation.flag(burst, "burst")
        self.heartbeat_ttl_ms = validation.integer(
            heartbeat_ttl_ms, "heartbeat_ttl_ms", live.MIN_TTL_MS, live.MAX_TTL_MS, unit=" ms"
        )
        self.heartbeat_ms = (
            None
            if heartbeat_ms is None
            else validation.integer(heartbeat_ms, "heartbeat_ms", 1, self.heartbeat_ttl_ms // 3, unit=" ms")
        )
        self.worker_id = live.new_worker_id()
        self._started_ms: int | None = None  # the server's now at the first beat (RWQ-LIVE-005)
        self.logger = logger or LOGGER
        self._lock = threading.Lock()
        self._idle = 0  # burst: slots whose last lease found nothing, until they look again
        self._stats = WorkerStats()
        self._fatal: BaseException | None = None
        self._policy_at_start = False  # whether the queue had a retry policy when the worker started
        self._raised_delay = False  # a RetryLater's delay was raised to the fallback (logged once)
        self.forced_by: signal.Signals | None = None  # the second signal that forced the stop

    @property
    def stats(self) -> WorkerStats:
        """How the jobs so far ended (a snapshot)."""
        return self._stats

    @abc.abstractmethod
    def _held_ids(self) -> list[str]:
        """The ids of the items the worker holds now."""

    def _record(self) -> dict[str, Any]:
        """What the heartbeat registers (profile workers, SPEC §21): never a lease token."""
        from . import __version__  # noqa: PLC0415 (the package defines it after importing this module)

        stats, held = self._stats, self._held_ids()
        record: dict[str, Any] = {
            "id": self.worker_id,
            "kind": "worker",
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "language": "python",
            "implementation": "rwq",
            "version": __version__,
            "started_ms": self._started_ms,
            "ttl_ms": self.heartbeat_ttl_ms,
            "concurrency": self.concurrency,
            "in_hand": len(held),
            "items": held[: live.MAX_ITEMS],
            **dataclasses.asdict(stats),
        }
        while len(live.encode_record(record)) > live.MAX_RECORD_BYTES:  # long ids
            record["items"] = record["items"][:-1]
        return record

    def _beaten(self, beat: Beat) -> bool:
        """Take the first beat's server time as ``started_ms``; True when that was the first (the
        record is then sent again, with it)."""
        if self._started_ms is None:
            self._started_ms = beat.now_ms
            return True
        return False

    def health(self) -> WorkerHealth:
        """Liveness for a probe: how long since Redis last answered a lease, items in hand."""
        seen = self._last_contact
        return WorkerHealth(
            None if seen is None else time.monotonic() - seen, self._in_hand(), self._is_stopping()
        )

    @abc.abstractmethod
    def _is_stopping(self) -> bool:
        """Whether a graceful stop was requested."""

    @abc.abstractmethod
    def _in_hand(self) -> int:
        """How many items the handlers hold."""

    def _contacted(self) -> None:
        """A lease call got its answer: the worker and its Redis are alive; touch the liveness file."""
        self._last_contact = time.monotonic()
        if self.liveness_file is not None:
            try:
                self.liveness_file.touch()
            except OSError as exc:
                self.logger.warning("cannot touch the liveness file %s: %s", self.liveness_file, exc)

    def _found_nothing(self) -> bool:
        """Burst: a slot's lease found nothing. True, and the worker stops, once every slot has
        found nothing and holds nothing: the queue is drained as far as this worker can see.
        Otherwise the slot counts as idle until it calls :meth:`_resume`."""
        with self._lock:
            self._idle += 1
            drained = self._idle == self.concurrency
        if drained:
            self.logger.info("burst: no item ready and none in hand; stopping")
            self.stop()
        return drained

    def _resume(self) -> None:
        """Burst: an idle slot looks for an item again."""
        with self._lock:
            self._idle -= 1

    def _past_timeout(self, job: _JobBase) -> bool:
        """Whether ``job`` has run longer than ``timeout_ms``."""
        return self.timeout_ms is not None and time.monotonic() - job._started >= self.timeout_ms / 1000

    def _clean_pace_ms(self) -> int:
        """The pace of the workers' light cleans: three quarters of the interval, so that a fleet
        walks the processing list about once per interval, however many workers it has."""
        assert self.clean_interval_ms is not None
        return max(self.clean_interval_ms * 3 // 4, 1)

    def _clean_pause_s(self) -> float:
        """The pause before the next light clean: the interval, +-25 % at random."""
        assert self.clean_interval_ms is not None
        return self.clean_interval_ms * random.uniform(1 - CLEAN_JITTER, 1 + CLEAN_JITTER) / 1000

    def _policy_stored(self, stored: bool, current: RetryPolicy | None, error: RedisFailure | None) -> None:
        """Act on the start-up offer of the worker's policy (or, with ``retry=None``, its read):
        ``stored`` when it was written, ``current``, the policy the queue has, and ``error``, why
        offering or reading failed. Remembers whether the queue has a policy (RWQ-WORKER-002).

        A stored policy that differs wins, with one warning (RWQ-WORKER-003); a queue with none
        that this worker may not give one refuses the start (RWQ-WORKER-001); a sharded queue
        whose shard count is not recorded refuses it with :class:`~rwq.errors.ShardCountUnrecorded`."""
        self._policy_at_start = stored or current is not None
        if isinstance(error, ShardCountUnrecorded):
            raise error
        if self.retry is None:
            return
        fix = f"rwq policy set --prefix {self.prefix}" + (f" --shards {self._shards}" if self._shards else "")
        if stored:
            self.logger.info("queue %r had no retry policy: stored the worker's %s", self.prefix, self.retry)
        elif current is not None and current != self.retry:
            self.logger.warning(
                "queue %r keeps its stored retry policy %s, not this worker's %s: the stored one "
                "applies to every worker; an admin changes it with `%s` (RWQ-WORKER-003)",
                self.prefix,
                current,
                self.retry,
                fix,
            )
        elif current is not None:
            self.logger.info("queue %r has the worker's retry policy already", self.prefix)
        elif isinstance(error, NoPermission):
            raise PolicyMissing(
                f"queue {self.prefix!r} has no retry policy and this worker may not store one: run "
                f"`{fix}` as an admin (or, in code, pass retry=None to run without one) (RWQ-WORKER-001)"
            )
        else:
            self.logger.warning(
                "could not store or read the retry policy of queue %r (%s); failed items wait %d ms "
                "before they run again (RWQ-WORKER-002)",
                self.prefix,
                error,
                FALLBACK_DELAY_MS,
            )

    def _failed(self, job: _JobBase, exc: BaseException) -> None:
        """Record what the handler's exception asks of the fail, and log it: its reason and
        traceback, and a NonRetryable's dead-now or a RetryLater's delay."""
        job._failure = failure_reason(exc)
        job._detail = failure_detail(exc)
        job._error = type(exc).__name__
        job._dead_now = isinstance(exc, NonRetryable)
        job._retry_in = exc.delay_ms if isinstance(exc, RetryLater) else None
        if job._retry_in is not None:
            self.logger.info("item %r: the handler asked to run it again in %d ms", job.id, job._retry_in)
        elif job._dead_now:
            self.logger.exception("item %r: handler failed, not retryable; dead-lettering it", job.id)
        else:
            self.logger.exception("item %r: handler failed; recording a failed attempt", job.id)

    def _fail_options(self, job: _JobBase) -> dict[str, Any]:
        """The options of ``fail`` for a failed job: a fallback delay whatever the queue's policy,
        the handler's traceback, and what its exception asked for; on a queue that had no policy
        at start, a RetryLater's delay is at least the fallback (RWQ-WORKER-002)."""
        delay = job._retry_in
        if delay is not None and delay < FALLBACK_DELAY_MS and not self._policy_at_start:
            delay = FALLBACK_DELAY_MS
            if not self._raised_delay:
                self._raised_delay = True
                self.logger.warning(
                    "queue %r has no retry policy: a RetryLater delay shorter than %d ms is raised "
                    "to it, so that a failing item never runs in a hot loop (RWQ-WORKER-002)",
                    self.prefix,
                    FALLBACK_DELAY_MS,
                )
        return {
            "dead": job._dead_now,
            "delay_ms": delay,
            "fallback_delay_ms": FALLBACK_DELAY_MS,
            "detail": job._detail,
        }

    @property
    @abc.abstractmethod
    def prefix(self) -> str:
        """The queue's key prefix."""

    @property
    @abc.abstractmethod
    def _shards(self) -> int | None:
        """The queue's shard count; None for an unsharded queue."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Request a graceful shutdown."""

    @abc.abstractmethod
    def halt(self) -> None:
        """Stop now: end the grace period at once and release the items of the running handlers."""

    @contextlib.contextmanager
    def install_signal_handlers(self) -> Iterator[None]:
        """Within the ``with`` block, SIGTERM and SIGINT call :meth:`stop`; main thread only.

        A signal while the worker already stops (the second one) calls :meth:`halt`: the items
        in hand are released at once, and ``forced_by`` names the signal. It also puts the
        previous handlers back, so a third one acts as before. They are restored when the block
        ends.
        """
        previous = {sig: signal.getsignal(sig) for sig in SIGNALS}

        def restore() -> None:
            for sig, handler in previous.items():
                signal.signal(sig, signal.SIG_DFL if handler is None else handler)

        def on_signal(signum: int, _frame: FrameType | None) -> None:
            name = signal.Signals(signum).name
            if not self._is_stopping():
                self.logger.warning("%s: stopping gracefully (send it again to force)", name)
                self.stop()
                return
            self.logger.warning("%s again: releasing the items in hand and stopping now", name)
            self.forced_by = signal.Signals(signum)
            restore()
            self.halt()

        for sig in SIGNALS:
            signal.signal(sig, on_signal)
        try:
            yield
        finally:
            restore()

    def _count(self, outcome: _Settled) -> None:
        with self._lock:
            self._stats = dataclasses.replace(self._stats, **{outcome: getattr(self._stats, outcome) + 1})

    def _crashed(self, exc: BaseException, where: str) -> None:
        self.logger.critical("%s crashed; stopping the worker", where, exc_info=exc)
        with self._lock:
            if self._fatal is None:
                self._fatal = exc
        self.stop()

    def _settled(self, job: _JobBase, outcome: _Settled, done: bool) -> None:
        """Count a job its slot settled (``done``) or found lost."""
        if not done:
            self.logger.warning("item %r: the lease was lost before the job was settled", job.id)
        self._count(outcome if done else "lost")
        kind: EventKind = ("dead" if job._dead else outcome) if done else "lost"
        self._emit(job, kind)

    def _count_released(self, jobs: Sequence[_JobBase], outcomes: Sequence[Outcome]) -> None:
        """Count the shutdown's release of abandoned jobs."""
        for job, outcome in zip(jobs, outcomes, strict=True):
            kind: _Settled = "released" if outcome is Outcome.DONE else "lost"
            self._count(kind)
            self._emit(job, kind)

    def _emit(self, job: _JobBase, kind: EventKind) -> None:
        """Log a settled job at INFO (its fields as the record's extras), and tell ``on_event``
        (if any) what happened to ``job``; its errors are logged, never raised."""
        ended = kind != "leased"
        duration_ms = round((time.monotonic() - job._started) * 1000) if ended else None
        if ended and self.logger.isEnabledFor(logging.INFO):
            fields = {
                "queue": self.prefix,
                "id": job.id,
                "attempt": job.lease.attempt,
                "duration_ms": duration_ms,
                "outcome": kind,
            }
            self.logger.info(
                "item %r %s in %d ms (attempt %d)", job.id, kind, duration_ms, job.lease.attempt, extra=fields
            )
        if self.on_event is None:
            return
        event = WorkerEvent(
            kind, self.prefix, job.id, job.lease.attempt, duration_ms, job._error if ended else None
        )
        try:
            self.on_event(event)
        except Exception:
            self.logger.exception("on_event failed for %s of item %r", kind, job.id)

    def _release_failed(self, count: int, exc: RedisFailure) -> list[Outcome]:
        """Log a failed shutdown release; its outcomes count the jobs as lost."""
        self.logger.error(
            "could not release %d items at shutdown (%s); they return once their leases expire "
            "and a cleaner runs",
            count,
            exc,
        )
        return [Outcome.LEASE_LOST] * count


class Worker(_WorkerBase):
    """Runs ``handler`` on items leased from ``queue`` in ``concurrency`` threads.

    The handler gets a :class:`Job`; returning completes the item, raising records a failed
    attempt (logged with its traceback, then ``on_error(job, exc)`` is called): the item comes
    back after the queue's backoff, or goes to the dead set with the exception as its reason once
    its attempts are used up. ``retry`` is the policy stored at start when the queue has none
    (:data:`DEFAULT_RETRY`; None stores nothing). A worker that may not store it (an ACL user
    that only reads the policy) on a queue that has none refuses to start with
    :class:`~rwq.errors.PolicyMissing`; a queue's stored policy that differs wins, with a warning.
    Without any policy a failed item runs again after 1 s (:data:`FALLBACK_DELAY_MS`). Raise
    :class:`~rwq.errors.NonRetryable` to dead-letter the item now, or
    :class:`~rwq.errors.RetryLater` to run it again after a delay of your choice (at least 1 s on a
    queue that had no policy when the worker started, RWQ-WORKER-002); a dead item
    keeps the handler's traceback as its ``detail``. Items given back at shutdown do not use up
    an attempt. An item whose lease runs out unsettled (a crashed process, a reply
    lost with the next item in it) comes back through a light clean, which every worker runs
    every ``clean_interval_ms`` (+-25 %; by default the lease time, so a crashed worker's item
    runs again within about 2.25 lease times plus ``poll_timeout_ms``; None: no cleaning). A
    handler that raises a BaseException that is not an Exception (SystemExit) fails its item (an
    attempt used), then stops the worker, and :meth:`run` re-raises it, as it does unexpected
    errors such as :class:`~rwq.errors.UnsupportedServer`. The Redis client's
    ``socket_timeout``, if any, must exceed ``poll_timeout_ms``. :meth:`health` (and
    ``liveness_file``, touched after each lease call Redis answered) tell a probe the worker is
    alive. ``on_event`` gets a :class:`WorkerEvent` for each lease and each settled item
    (``rwq.otel`` turns them into OpenTelemetry metrics and spans), and each settled item is
    logged at INFO with ``queue``, ``id``, ``attempt``, ``duration_ms`` and ``outcome`` as the
    record's extra fields. With ``burst``, the worker stops by itself once a lease finds nothing
    while it holds nothing (items delayed for a later retry stay).

    ``timeout_ms`` (None: no limit), for a sync handler, which a thread cannot stop: a handler
    still running after ``timeout_ms`` has its item recorded as failed (``TimeoutError``, so it
    is retried after the backoff) and ``job.lost`` set, which asks it to stop; its slot stays
    busy until it returns, and what it returns is ignored.

    One item never runs twice at once in one worker: while a handler runs on an item here
    (timed out, its lease lost, or simply still running when the item is delivered again), a slot
    that leases the same id holds it, lease renewed, and starts it once the earlier run has
    returned (or gives it back at shutdown). Other workers may lease the item meanwhile, so a
    handler that can outlive its lease or ``timeout_ms`` should check ``job.lost``.
    """

    def __init__(
        self,
        queue: WorkQueue | ShardedWorkQueue,
        handler: Callable[[Job], object],
        *,
        concurrency: int = 1,
        lease_ms: int = 30_000,
        renew_interval_ms: int | None = None,
        poll_timeout_ms: int = 1_000,
        clean_interval_ms: int | Literal["lease_ms"] | None = LEASE_MS,
        shutdown_grace_ms: int = 10_000,
        retry: RetryPolicy | None = DEFAULT_RETRY,
        on_error: Callable[[Job, Exception], object] | None = None,
        on_event: Callable[[WorkerEvent], object] | None = None,
        timeout_ms: int | None = None,
        liveness_file: str | os.PathLike[str] | None = None,
        logger: logging.Logger | None = None,
        burst: bool = False,
        heartbeat_ms: int | None = live.BEAT_MS,
        heartbeat_ttl_ms: int = live.TTL_MS,
    ) -> None:
        super().__init__(
            queue=queue,
            queue_types=(WorkQueue, ShardedWorkQueue),
            handler=handler,
            kind="sync",
            on_error=on_error,
            concurrency=concurrency,
            lease_ms=lease_ms,
            renew_interval_ms=renew_interval_ms,
            poll_timeout_ms=poll_timeout_ms,
            clean_interval_ms=clean_interval_ms,
            shutdown_grace_ms=shutdown_grace_ms,
            retry=retry,
            on_event=on_event,
            timeout_ms=timeout_ms,
            liveness_file=liveness_file,
            logger=logger,
            burst=burst,
            heartbeat_ms=heartbeat_ms,
            heartbeat_ttl_ms=heartbeat_ttl_ms,
        )
        self.queue = queue
        self.handler = checked_sync(handler)
        self.on_error = on_error
        # ids whose handler runs in this worker: its thread, and an event set when it returns
        self._runs: dict[str, tuple[threading.Thread, threading.Event]] = {}
        self._held: dict[Job, threading.Thread] = {}  # running and settling jobs: the renewer's set
        self._stopping = threading.Event()  # no more leasing
        self._halt = threading.Event()  # the grace period is over
        self._done = threading.Event()  # the renewer and the cleaner exit
        self._started = False

    @property
    def prefix(self) -> str:
        return self.queue.prefix

    @property
    def _shards(self) -> int | None:
        return self.queue.layout.count if isinstance(self.queue, ShardedWorkQueue) else None

    def _is_stopping(self) -> bool:
        return self._stopping.is_set()

    def _in_hand(self) -> int:
        with self._lock:
            return len(self._held)

    def stop(self) -> None:
        """Request a graceful shutdown: stop leasing now; :meth:`run` then winds down and returns."""
        self._stopping.set()

    def halt(self) -> None:
        """Stop now: no more grace; the items of running handlers are released and :meth:`run`
        returns once the slots that poll or settle are done (their threads, if still running a
        handler, are left behind)."""
        self._stopping.set()
        self._halt.set()

    def run(self) -> None:
        """Work until stopped, then shut down gracefully; a worker runs once.

        An exception in the calling thread (KeyboardInterrupt) also shuts down gracefully first.
        """
        if self._started:
            raise RuntimeError("a Worker runs once")
        self._started = True
        self.logger.info(
            "worker on %r: %d slots, lease %d ms", self.queue.prefix, self.concurrency, self.lease_ms
        )
        stored, current, error = False, None, None
        try:
            if self.retry is not None:
                stored = self.queue.set_retry_policy(self.retry, if_absent=True)
            current = self.retry if stored else self.queue.retry_policy()
        except RedisFailure as exc:  # a worker ACL user may only read the policy (SPEC 13.1)
            error = exc
            with contextlib.suppress(RedisFailure):
                current = self.queue.retry_policy()
        self._policy_stored(stored, current, error)
        slots = [self._start(self._slot, f"rwq-slot-{n}") for n in range(self.concurrency)]
        helpers = [self._start(self._renewer, "rwq-renewer")]
        if self.clean_interval_ms is not None:
            helpers.append(self._start(self._cleaner, "rwq-cleaner"))
        if self.timeout_ms is not None:
            helpers.append(self._start(self._watchdog, "rwq-watchdog"))
        try:
            self._stopping.wait()
        finally:
            self.stop()
            self._shutdown(slots, helpers)
            self._leave()  # every item settled or released (RWQ-LIVE-007)
        self.logger.info("worker on %r stopped: %s", self.queue.prefix, self.stats)
        if self._fatal is not None:
            raise self._fatal

    def _start(self, target: Callable[[], None], name: str) -> threading.Thread:
        def guarded() -> None:
            try:
                target()
            except BaseException as exc:
                self._crashed(exc, name)

        thread = threading.Thread(target=guarded, name=name, daemon=True)
        thread.start()
        return thread

    def _shutdown(self, slots: list[threading.Thread], helpers: list[threading.Thread]) -> None:
        deadline = time.monotonic() + self.shutdown_grace_ms / 1000
        for thread in slots:  # the grace period, cut short by halt()
            while thread.is_alive() and not self._halt.is_set() and time.monotonic() < deadline:
                thread.join(min(max(deadline - time.monotonic(), 0.0), CHECK_S))
        self._halt.set()
        busy = self._abandon()
        with self._lock:  # a timed-out handler may never return: its thread is left behind too
            busy |= {thread for thread, _ in self._runs.values()}
        for thread in slots:
            if thread not in busy:  # polling or settling: both end promptly now
                thread.join()
        self._done.set()
        for thread in helpers:
            thread.join()

    def _abandon(self) -> set[threading.Thread]:
        """Release the items of handlers still running after the grace period; their threads."""
        with self._lock:
            running = {job: thread for job, thread in self._held.items() if job._state is _State.RUNNING}
            for job in running:
                job._state = _State.ABANDONED
                del self._held[job]
                job.lost.set()
        if running:
            self.logger.warning(
                "%d handlers still running after %d ms; releasing their items",
                len(running),
                self.shutdown_grace_ms,
            )
            try:
                outcomes = self.queue.release_many([job.lease for job in running], refund_attempt=True)
            except RedisFailure as exc:
                outcomes = self._release_failed(len(running), exc)
            self._count_released(list(running), outcomes)
        return set(running.values())

    def _slot(self) -> None:
        backoff = _Backoff()
        lease: Lease | None = None  # the next item, when the last settle leased it
        while True:
            if lease is None:
                if self._stopping.is_set():
                    return
                try:
                    lease = self._poll()
                except RedisFailure as exc:
                    delay = backoff.next_s()
                    self.logger.warning("lease failed (%s); retrying in %.2f s", exc, delay)
                    self._stopping.wait(delay)
                    continue
                backoff.reset()
                if lease is None:
                    continue
            job = Job(lease)
            if self._stopping.is_set():  # stopped while this lease was on its way: give it back
                job._state = _State.SETTLING
                self._settle(job, "released")
                return
            with self._lock:
                self._held[job] = threading.current_thread()
                earlier = self._claim(job)
            if earlier is not None and not self._wait_for_run(job, earlier):
                return
            self._emit(job, "leased")
            lease = self._work(job)

    def _poll(self) -> Lease | None:
        """A slot's lease: blocking for up to ``poll_timeout_ms``; with ``burst``, non-blocking,
        stopping the worker once every slot found nothing."""
        if not self.burst:
            lease = self.queue.lease(self.lease_ms, block=True, timeout_ms=self.poll_timeout_ms)
            self._contacted()
            return lease
        lease = self.queue.lease(self.lease_ms)
        self._contacted()
        if lease is None and not self._found_nothing():
            self._stopping.wait(BURST_PAUSE_S)
            self._resume()
        return lease

    def _claim(self, job: Job) -> threading.Event | None:
        """Under the lock: mark ``job``'s id as running in this slot's thread; or, when a run of
        that id still goes on in this worker (timed out, lease lost, or re-delivered), mark the
        job waiting and return the event that run sets when it returns."""
        earlier = self._runs.get(job.id)
        if earlier is not None:
            job._state = _State.WAITING
            return earlier[1]
        self._runs[job.id] = (threading.current_thread(), threading.Event())
        job._state = _State.RUNNING
        return None

    def _wait_for_run(self, job: Job, earlier: threading.Event | None) -> bool:
        """Hold ``job`` (its lease renewed) until the earlier run of its id in this worker returns,
        so that an item never runs twice at once here; False if the worker stopped first (the item
        was then given back)."""
        self.logger.warning("item %r: leased again while an earlier run of it goes on here; waiting", job.id)
        while earlier is not None:
            if not earlier.wait(CHECK_S):
                if self._stopping.is_set():
                    with self._lock:
                        del self._held[job]
                        job._state = _State.SETTLING
                    self._settle(job, "released")
                    return False
                continue
            with self._lock:
                earlier = self._claim(job)
        job._started = time.monotonic()  # its timeout counts from its start
        return True

    def _ran(self, job: Job) -> None:
        """``job``'s handler returned: its id may start again in this worker."""
        with self._lock:
            self._runs.pop(job.id)[1].set()

    def _work(self, job: Job) -> Lease | None:
        """Run the handler and settle the item; the next item when the settle leased one. A
        BaseException that is not an Exception (SystemExit) fails the item too, then stops the
        worker, which re-raises it."""
        error: BaseException | None = None
        try:
            self.handler(job)
        except Exception as exc:
            error = exc
            self._failed(job, exc)
            if self.on_error is not None:
                try:
                    self.on_error(job, exc)
                except Exception:
                    self.logger.exception("on_error failed for item %r", job.id)
        except BaseException as exc:  # the handler failed: an attempt, never refunded (RWQ-WORKER-004)
            error = exc
            self._failed(job, exc)
            self._crashed(exc, f"the handler of item {job.id!r}")
        finally:
            self._ran(job)
        with self._lock:
            if job._state in (_State.ABANDONED, _State.TIMED_OUT):
                return None
            job._state = _State.SETTLING
        try:
            return self._settle(job, "completed" if error is None else "failed")
        finally:
            with self._lock:
                del self._held[job]

    def _settle(self, job: Job, outcome: Literal["completed", "failed", "released"]) -> Lease | None:
        """Complete, fail or release the item as its lease holder, retrying Redis failures until
        halted. A completion also leases the next item in the same round trip while the worker
        runs (RWQ-NEXT-005); that item is returned."""
        backoff = _Backoff()
        take_next = outcome == "completed"
        following: Lease | None = None
        while True:
            try:
                if outcome == "completed" and take_next and not self._stopping.is_set():
                    take_next = False  # a retry after a failure only completes
                    result, following = self.queue.complete_and_lease(
                        job.lease, self.lease_ms, require_lease=True
                    )
                    done = result is Outcome.DONE
                elif outcome == "completed":
                    done = self.queue.complete(job.lease, require_lease=True)
                elif outcome == "failed":
                    failed = self.queue.fail(job.lease, job._failure, **self._fail_options(job)).outcome
                    done, job._dead = failed is not FailOutcome.GONE, failed is FailOutcome.DEAD
                else:  # never run: not an attempt (RWQ-WORKER-004)
                    done = self.queue.release(job.lease, refund_attempt=True)
            except LeaseLost:
                done = False
            except RedisFailure as exc:
                if self._halt.is_set():
                    self.logger.exception("item %r: giving up settling it at shutdown", job.id)
                    done = False
                else:
                    delay = backoff.next_s()
                    self.logger.warning(
                        "item %r: settling failed (%s); retrying in %.2f s", job.id, exc, delay
                    )
                    self._halt.wait(delay)
                    continue
            self._settled(job, outcome, done)
            return following

    def _held_ids(self) -> list[str]:
        with self._lock:
            return [job.id for job in self._held]

    def _beat(self) -> None:
        """One heartbeat (two for the first, to record its server time); a failure is logged."""
        assert self.heartbeat_ms is not None
        try:
            while self._beaten(self.queue.worker_beat(self.worker_id, self.heartbeat_ttl_ms, self._record())):
                pass
        except RwqError as exc:
            self.logger.warning("heartbeat of worker %s failed: %s: %s", self.worker_id, exc.code, exc)

    def _leave(self) -> None:
        if self.heartbeat_ms is not None:
            try:
                self.queue.worker_leave(self.worker_id)
            except RwqError as exc:
                self.logger.warning("worker %s could not leave: %s: %s", self.worker_id, exc.code, exc)

    def _renewer(self) -> None:
        """Renews held leases every ``renew_interval_ms`` and, with the heartbeat on, beats at once
        and then every ``heartbeat_ms`` (RWQ-LIVE-001)."""
        now = time.monotonic()
        renew_at, beat_at = now + self.renew_interval_ms / 1000, now
        while True:
            if self.heartbeat_ms is not None and time.monotonic() >= beat_at:
                beat_at = time.monotonic() + self.heartbeat_ms / 1000
                self._beat()
            wake = renew_at if self.heartbeat_ms is None else min(renew_at, beat_at)
            if self._done.wait(max(wake - time.monotonic(), 0.0)):
                return
            if time.monotonic() < renew_at:
                continue
            renew_at = time.monotonic() + self.renew_interval_ms / 1000
            with self._lock:
                jobs = [job for job in self._held if not job.lost.is_set()]
            if not jobs:
                continue
            try:
                renewed = self.queue.renew_many([job.lease for job in jobs], self.lease_ms)
            except RedisFailure as exc:
                self.logger.warning("renewing %d leases failed: %s", len(jobs), exc)
                continue
            for job, held in zip(jobs, renewed, strict=True):
                if not held:
                    with self._lock:
                        lost = job._state is _State.RUNNING and job in self._held
                        if lost:
                            job.lost.set()
                    if lost:
                        self.logger.warning("item %r: lease lost (expired or taken over)", job.id)

    def _watchdog(self) -> None:
        """Fail the items of handlers running past ``timeout_ms``. A thread cannot be killed: its
        slot stays busy until the handler returns, and what it returns then is ignored; until
        then the item's id stays in ``_runs``, so that no slot starts it again, and the shutdown
        does not wait for that thread."""
        assert self.timeout_ms is not None
        limit_s = self.timeout_ms / 1000
        while not self._done.wait(min(limit_s / 10, 1.0)):
            with self._lock:
                late = [job for job in self._held if job._state is _State.RUNNING and self._past_timeout(job)]
                for job in late:
                    job._state = _State.TIMED_OUT  # its slot ignores what the handler returns
                    del self._held[job]  # no more renewals; its id stays in _runs until it returns
                    job._failure = f"TimeoutError: the handler ran longer than {self.timeout_ms} ms"
                    job._error = "TimeoutError"
                    job.lost.set()
            for job in late:
                self.logger.error("item %r: the handler ran longer than %d ms", job.id, self.timeout_ms)
                self._settle(job, "failed")

    def _cleaner(self) -> None:
        while not self._done.wait(self._clean_pause_s()):
            try:
                report = self.queue.light_clean(pace_ms=self._clean_pace_ms())
            except RedisFailure as exc:
                self.logger.warning("light_clean failed: %s", exc)
                continue
            if report.requeued:
                self.logger.info("light_clean requeued %d abandoned items", len(report.requeued))
