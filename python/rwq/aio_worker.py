"""The asyncio worker helper: :class:`AsyncWorker`, the same behaviour as :class:`~rwq.worker.Worker`.

Slots, the renewer and the optional cleaner are tasks; each handler runs in a task of its own,
so the handlers still running when the grace period ends are cancelled before their items are
released.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Literal

from .aio import AsyncWorkQueue
from .errors import LeaseLost, RedisFailure, RwqError
from .handlers import refuse_unrun
from .protocol import live
from .protocol.operations import FailOutcome, Lease, Outcome, RetryPolicy
from .sharded import AsyncShardedWorkQueue
from .worker import (
    BURST_PAUSE_S,
    CHECK_S,
    DEFAULT_RETRY,
    LEASE_MS,
    WorkerEvent,
    _Backoff,
    _JobBase,
    _State,
    _WorkerBase,
)

__all__ = ["AsyncJob", "AsyncWorker"]


class AsyncJob(_JobBase):
    """A leased item: ``id``, ``data``, the ``lease``, and ``lost``, an event set once this worker
    no longer holds the lease (a renewal found it lost, or shutdown released it).
    """

    __slots__ = ("lost",)

    def __init__(self, lease: Lease) -> None:
        super().__init__(lease)
        self.lost = asyncio.Event()

    def __repr__(self) -> str:
        return f"AsyncJob(id={self.id!r}, lost={self.lost.is_set()})"


@dataclass(frozen=True, slots=True)
class _Escaped:
    """A handler's BaseException, carried out of the task it ran in as a value."""

    exc: BaseException


def _check(handler: object, result: object) -> None:
    """Raise what a handler's run that returned ``result`` failed with: its escaped BaseException,
    or InvalidType for work not done (:func:`~rwq.handlers.refuse_unrun`)."""
    if isinstance(result, _Escaped):
        raise result.exc
    refuse_unrun(handler, result)


async def _sleep(seconds: float, event: asyncio.Event) -> None:
    """Sleep for ``seconds`` or until ``event`` is set."""
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(event.wait(), seconds)


class AsyncWorker(_WorkerBase):
    """Runs the coroutine function ``handler`` on items leased from ``queue``, ``concurrency`` at once.

    The handler must be async (a coroutine function, an object with ``async def __call__``, or a
    partial of either); a plain function is refused before any I/O (run it with ``Worker``).

    The handler gets an :class:`AsyncJob`; returning completes the item, raising records a failed
    attempt (logged with its traceback, then ``on_error(job, exc)`` is called). Retries, the
    default policy (``retry``) and the light cleans (``clean_interval_ms``) are those of
    :class:`~rwq.worker.Worker`; a handler still running after ``timeout_ms`` is cancelled and
    its item recorded as failed (``TimeoutError``). A handler whose awaited result is itself
    awaitable (it returned an un-awaited coroutine) fails its item. ``burst``, the per-item log
    line and the rule that one item never runs twice at once in one worker (a slot that leases
    an id whose handler still runs here holds it, lease renewed, until that run ends) are those
    of :class:`~rwq.worker.Worker` too. A handler that raises a BaseException that is not an
    Exception (SystemExit) fails its item, then stops the worker; :meth:`run` re-raises it, as it
    does unexpected errors in the worker's own tasks (such as
    :class:`~rwq.errors.UnsupportedServer`). The Redis client's ``socket_timeout``, if any, must
    exceed ``poll_timeout_ms``.
    """

    def __init__(
        self,
        queue: AsyncWorkQueue | AsyncShardedWorkQueue,
        handler: Callable[[AsyncJob], Awaitable[object]],
        *,
        concurrency: int = 1,
        lease_ms: int = 30_000,
        renew_interval_ms: int | None = None,
        poll_timeout_ms: int = 1_000,
        clean_interval_ms: int | Literal["lease_ms"] | None = LEASE_MS,
        shutdown_grace_ms: int = 10_000,
        retry: RetryPolicy | None = DEFAULT_RETRY,
        on_error: Callable[[AsyncJob, BaseException], object] | None = None,
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
            queue_types=(AsyncWorkQueue, AsyncShardedWorkQueue),
            handler=handler,
            kind="async",
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
        self.handler = handler
        self.on_error = on_error
        # running, waiting and settling jobs, their handler tasks (None while waiting)
        self._held: dict[AsyncJob, asyncio.Task[bool] | None] = {}
        self._runs: dict[str, asyncio.Event] = {}  # ids whose handler runs here: set when it ends
        self._stopping = asyncio.Event()  # no more leasing
        self._halt = asyncio.Event()  # the grace period is over
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def prefix(self) -> str:
        return self.queue.prefix

    @property
    def _shards(self) -> int | None:
        return self.queue.layout.count if isinstance(self.queue, AsyncShardedWorkQueue) else None

    def _is_stopping(self) -> bool:
        return self._stopping.is_set()

    def _in_hand(self) -> int:
        return len(self._held)

    def _held_ids(self) -> list[str]:
        return [job.id for job in self._held]

    def stop(self) -> None:
        """Request a graceful shutdown: stop leasing now; :meth:`run` then winds down and returns.

        Safe from any thread and from signal handlers.
        """
        if self._stopping.is_set():
            return
        if self._loop is None:
            self._stopping.set()
        else:
            self._loop.call_soon_threadsafe(self._stopping.set)

    def halt(self) -> None:
        """Stop now: no more grace; running handlers are cancelled and their items released.

        Safe from any thread and from signal handlers.
        """
        for event in (self._stopping, self._halt):
            if self._loop is None:
                event.set()
            else:
                self._loop.call_soon_threadsafe(event.set)

    async def run(self) -> None:
        """Work until stopped, then shut down gracefully; a worker runs once.

        If the task running this is cancelled, it also shuts down gracefully first.
        """
        if self._loop is not None:
            raise RuntimeError("an AsyncWorker runs once")
        self._loop = asyncio.get_running_loop()
        self.logger.info(
            "worker on %r: %d slots, lease %d ms", self.queue.prefix, self.concurrency, self.lease_ms
        )
        stored, current, error = False, None, None
        try:
            if self.retry is not None:
                stored = await self.queue.set_retry_policy(self.retry, if_absent=True)
            current = self.retry if stored else await self.queue.retry_policy()
        except RedisFailure as exc:  # a worker ACL user may only read the policy (SPEC 13.1)
            error = exc
            with contextlib.suppress(RedisFailure):
                current = await self.queue.retry_policy()
        self._policy_stored(stored, current, error)
        slots = [self._start(self._slot(), f"rwq-slot-{n}") for n in range(self.concurrency)]
        helpers = [self._start(self._renewer(), "rwq-renewer")]
        if self.clean_interval_ms is not None:
            helpers.append(self._start(self._cleaner(), "rwq-cleaner"))
        try:
            await self._stopping.wait()
        finally:
            self._stopping.set()
            await self._shutdown(slots, helpers)
            await self._leave()  # every item settled or released (RWQ-LIVE-007)
        self.logger.info("worker on %r stopped: %s", self.queue.prefix, self.stats)
        if self._fatal is not None:
            raise self._fatal

    def _start(self, work: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        async def guarded() -> None:
            try:
                await work
            except Exception as exc:
                self._crashed(exc, name)

        return asyncio.create_task(guarded(), name=name)

    async def _shutdown(self, slots: list[asyncio.Task[None]], helpers: list[asyncio.Task[None]]) -> None:
        ended = asyncio.ensure_future(asyncio.wait(slots))
        halted = asyncio.ensure_future(self._halt.wait())  # the grace period, cut short by halt()
        grace_s = self.shutdown_grace_ms / 1000
        await asyncio.wait((ended, halted), timeout=grace_s, return_when=asyncio.FIRST_COMPLETED)
        for waiter in (ended, halted):  # the slots themselves run on
            waiter.cancel()
        await asyncio.gather(ended, halted, return_exceptions=True)
        self._halt.set()
        running = {
            job: task for job, task in self._held.items() if task is not None and job._state is _State.RUNNING
        }
        for job, task in running.items():
            job._state = _State.ABANDONED
            del self._held[job]
            job.lost.set()
            task.cancel()
        if running:
            self.logger.warning(
                "%d handlers still running after %d ms; cancelling them and releasing their items",
                len(running),
                self.shutdown_grace_ms,
            )
            await asyncio.gather(*running.values(), return_exceptions=True)
            try:
                outcomes = await self.queue.release_many([job.lease for job in running], refund_attempt=True)
            except RedisFailure as exc:
                outcomes = self._release_failed(len(running), exc)
            self._count_released(list(running), outcomes)
        await asyncio.wait(slots)  # polling or settling: both end promptly now
        for helper in helpers:
            helper.cancel()
        await asyncio.gather(*helpers, return_exceptions=True)

    async def _slot(self) -> None:
        backoff = _Backoff()
        lease: Lease | None = None  # the next item, when the last settle leased it
        while True:
            if lease is None:
                if self._stopping.is_set():
                    return
                try:
                    lease = await self._poll()
                except RedisFailure as exc:
                    delay = backoff.next_s()
                    self.logger.warning("lease failed (%s); retrying in %.2f s", exc, delay)
                    await _sleep(delay, self._stopping)
                    continue
                backoff.reset()
                if lease is None:
                    continue
            job = AsyncJob(lease)
            lease = None
            if self._stopping.is_set():  # stopped while this lease was on its way: give it back
                job._state = _State.SETTLING
                await self._settle(job, "released")
                return
            earlier = self._claim(job)
            if earlier is not None and not await self._wait_for_run(job, earlier):
                return
            self._emit(job, "leased")
            task = asyncio.create_task(self._handle(job))
            self._held[job] = task
            await asyncio.wait([task])
            self._runs.pop(job.id).set()  # the run is over: the id may start again here
            if job._state is _State.ABANDONED:
                continue
            job._state = _State.SETTLING
            try:
                lease = await self._settle(job, "completed" if task.result() else "failed")
            finally:
                del self._held[job]

    async def _poll(self) -> Lease | None:
        """A slot's lease: blocking for up to ``poll_timeout_ms``; with ``burst``, non-blocking,
        stopping the worker once every slot found nothing."""
        if not self.burst:
            lease = await self.queue.lease(self.lease_ms, block=True, timeout_ms=self.poll_timeout_ms)
            self._contacted()
            return lease
        lease = await self.queue.lease(self.lease_ms)
        self._contacted()
        if lease is None and not self._found_nothing():
            await _sleep(BURST_PAUSE_S, self._stopping)
            self._resume()
        return lease

    def _claim(self, job: AsyncJob) -> asyncio.Event | None:
        """Mark ``job``'s id as running here; or, when a run of that id still goes on in this
        worker (its lease lost, or re-delivered), hold the job (renewed) and return the event set
        when that run ends."""
        earlier = self._runs.get(job.id)
        if earlier is not None:
            job._state = _State.WAITING
            self._held[job] = None
            return earlier
        self._runs[job.id] = asyncio.Event()
        job._state = _State.RUNNING
        return None

    async def _wait_for_run(self, job: AsyncJob, earlier: asyncio.Event | None) -> bool:
        """Hold ``job`` until the earlier run of its id here ends, so that an item never runs twice
        at once in this worker; False if the worker stopped first (the item was given back)."""
        self.logger.warning("item %r: leased again while an earlier run of it goes on here; waiting", job.id)
        while earlier is not None:
            await _sleep(CHECK_S, earlier)
            if earlier.is_set():
                earlier = self._claim(job)
            elif self._stopping.is_set():
                del self._held[job]
                job._state = _State.SETTLING
                await self._settle(job, "released")
                return False
        del self._held[job]
        job._started = time.monotonic()  # its timeout counts from its start
        return True

    async def _call(self, job: AsyncJob) -> object:
        """The handler's result; a BaseException that is not an Exception (SystemExit) comes back
        wrapped, since one leaving a task (wait_for runs this in one) would end the event loop."""
        try:
            return await self.handler(job)
        except (Exception, asyncio.CancelledError):
            raise
        except BaseException as exc:
            return _Escaped(exc)

    async def _handle(self, job: AsyncJob) -> bool:
        """Run the handler: True if it returned; a failure is logged and reported to ``on_error``.
        A BaseException that is not an Exception (SystemExit) fails the item and stops the worker."""
        try:
            if self.timeout_ms is None:
                result = await self._call(job)
            else:
                result = await asyncio.wait_for(self._call(job), self.timeout_ms / 1000)
            _check(self.handler, result)
        except (Exception, asyncio.CancelledError) as exc:
            if job._state is _State.ABANDONED:  # cancelled by the shutdown, which releases the item
                raise
            self._failed(job, exc)
            if isinstance(exc, TimeoutError) and self._past_timeout(job):
                job._failure = f"TimeoutError: the handler ran longer than {self.timeout_ms} ms"
            if self.on_error is not None:
                try:
                    self.on_error(job, exc)
                except Exception:
                    self.logger.exception("on_error failed for item %r", job.id)
            return False
        except BaseException as exc:  # the handler failed: an attempt, never refunded (RWQ-WORKER-004)
            self._failed(job, exc)
            self._crashed(exc, f"the handler of item {job.id!r}")
            return False
        return True

    async def _settle(
        self, job: AsyncJob, outcome: Literal["completed", "failed", "released"]
    ) -> Lease | None:
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
                    result, following = await self.queue.complete_and_lease(
                        job.lease, self.lease_ms, require_lease=True
                    )
                    done = result is Outcome.DONE
                elif outcome == "completed":
                    done = await self.queue.complete(job.lease, require_lease=True)
                elif outcome == "failed":
                    failed = (
                        await self.queue.fail(job.lease, job._failure, **self._fail_options(job))
                    ).outcome
                    done, job._dead = failed is not FailOutcome.GONE, failed is FailOutcome.DEAD
                else:  # never run: not an attempt (RWQ-WORKER-004)
                    done = await self.queue.release(job.lease, refund_attempt=True)
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
                    await _sleep(delay, self._halt)
                    continue
            self._settled(job, outcome, done)
            return following

    async def _beat(self) -> None:
        """:meth:`Worker._beat`."""
        assert self.heartbeat_ms is not None
        try:
            while self._beaten(
                await self.queue.worker_beat(self.worker_id, self.heartbeat_ttl_ms, self._record())
            ):
                pass
        except RwqError as exc:
            self.logger.warning("heartbeat of worker %s failed: %s: %s", self.worker_id, exc.code, exc)

    async def _leave(self) -> None:
        if self.heartbeat_ms is not None:
            try:
                await self.queue.worker_leave(self.worker_id)
            except RwqError as exc:
                self.logger.warning("worker %s could not leave: %s: %s", self.worker_id, exc.code, exc)

    async def _renewer(self) -> None:
        """:meth:`Worker._renewer`: renewals every ``renew_interval_ms``, beats every ``heartbeat_ms``."""
        # Each helper also ends on its own at the halt: a cancellation that lands inside a Redis
        # call can come back as a timeout (RedisFailure), which the loop would otherwise survive.
        now = time.monotonic()
        renew_at, beat_at = now + self.renew_interval_ms / 1000, now
        while True:
            if self.heartbeat_ms is not None and time.monotonic() >= beat_at:
                beat_at = time.monotonic() + self.heartbeat_ms / 1000
                await self._beat()
            wake = renew_at if self.heartbeat_ms is None else min(renew_at, beat_at)
            await _sleep(max(wake - time.monotonic(), 0.0), self._halt)
            if self._halt.is_set():
                return
            if time.monotonic() < renew_at:
                continue
            renew_at = time.monotonic() + self.renew_interval_ms / 1000
            jobs = [job for job in self._held if not job.lost.is_set()]  # waiting ones too
            if not jobs:
                continue
            try:
                renewed = await self.queue.renew_many([job.lease for job in jobs], self.lease_ms)
            except RedisFailure as exc:
                self.logger.warning("renewing %d leases failed: %s", len(jobs), exc)
                continue
            for job, held in zip(jobs, renewed, strict=True):
                if not held and job._state is _State.RUNNING and job in self._held:
                    job.lost.set()
                    self.logger.warning("item %r: lease lost (expired or taken over)", job.id)

    async def _cleaner(self) -> None:
        while True:
            await _sleep(self._clean_pause_s(), self._halt)
            if self._halt.is_set():
                return
            try:
                report = await self.queue.light_clean(pace_ms=self._clean_pace_ms())
            except RedisFailure as exc:
                self.logger.warning("light_clean failed: %s", exc)
                continue
            if report.requeued:
                self.logger.info("light_clean requeued %d abandoned items", len(report.requeued))
