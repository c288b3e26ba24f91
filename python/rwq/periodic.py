"""Schedulers of profile periodic (SPEC §23): :class:`Scheduler` (a thread or the main loop) and
:class:`AsyncScheduler` (asyncio).

No leader is elected: any number of schedulers, in any language, may run on one queue, and each
slot still becomes at most one item (the ``fire`` script's watermark). A tick reads every
schedule with the server's now (``schedule list``), fires each one's due slots oldest first, and
says when the next slot is; ``run`` ticks until stopped, waiting until that slot by the server's
clock (the last reply's now plus the time waited on the monotonic clock), never more than 10 s,
and registers as a live worker of kind ``scheduler`` (profile workers, SPEC §21).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

from redis.exceptions import RedisError

from .aio import AsyncWorkQueue
from .client import WorkQueue
from .errors import InvalidArgument, RwqError
from .protocol import live
from .protocol.periodic import REFRESH_MS, Fired, Schedule, ScheduleList, StoredSchedule

LOGGER = logging.getLogger("rwq.scheduler")
BACKOFF_MS, MAX_BACKOFF_MS = 1000, 10_000
"""After a failed tick: wait 1 s, doubling up to 10 s."""


@dataclass(frozen=True, slots=True)
class Tick:
    """One pass: the ids of the items it added, the server's now of its last reply, and the
    next slot of any schedule not paused (None when there is none)."""

    fired: list[str]
    now_ms: int
    next_ms: int | None


class _Core:
    """What both schedulers share: the slots to offer, and definitions logged once."""

    def __init__(self, logger: logging.Logger | None) -> None:
        self.logger = logger or LOGGER
        self.worker_id = live.new_worker_id()
        self._refused: set[tuple[str, str]] = set()  # (name, digest) of definitions logged once
        self._started_ms: int | None = None

    def parsed(self, stored: StoredSchedule) -> Schedule | None:
        """The definition, or None for one this scheduler must skip (RWQ-SCHED-017), logged once."""
        try:
            return stored.schedule()
        except InvalidArgument as exc:
            if (stored.name, stored.digest) not in self._refused:
                self._refused.add((stored.name, stored.digest))
                self.logger.warning("schedule %s is skipped: %s", stored.name, exc)
            return None

    def due(self, listing: ScheduleList) -> list[tuple[StoredSchedule, Schedule, list[int]]]:
        """Per schedule not paused that parses: its slots due at the list's now (maybe none)."""
        out = []
        for stored in listing.schedules:
            schedule = None if stored.paused_ms is not None else self.parsed(stored)
            if schedule is not None:
                mark = stored.last_fired_ms if stored.last_fired_ms is not None else -1
                out.append((stored, schedule, schedule.due_slots(mark, listing.now_ms)))
        return out

    @staticmethod
    def next_slot(schedule: Schedule, mark: int | None, now_ms: int, nearest: int | None) -> int | None:
        slot = schedule.next_slot(max(mark if mark is not None else -1, now_ms))
        return slot if nearest is None else min(nearest, slot)

    @staticmethod
    def wait_ms(tick: Tick, since: float) -> float:
        """How long to wait after ``tick`` (returned at monotonic ``since``): until its next slot
        by the server's clock, at least 1 ms, at most 10 s (RWQ-SCHED-018)."""
        if tick.next_ms is None:
            return REFRESH_MS
        left = tick.next_ms - tick.now_ms - (time.monotonic() - since) * 1000
        return min(max(left, 1.0), REFRESH_MS)

    def record(self) -> dict[str, Any]:
        """What the heartbeat registers (SPEC §21), as a scheduler."""
        from . import __version__  # noqa: PLC0415 (the package defines it after importing this module)

        return {
            "id": self.worker_id,
            "kind": "scheduler",
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "language": "python",
            "implementation": "rwq",
            "version": __version__,
            "started_ms": self._started_ms,
            "ttl_ms": live.TTL_MS,
        }


class Scheduler(_Core):
    """A scheduler on a :class:`~rwq.WorkQueue`: :meth:`tick` is one pass, :meth:`run` loops
    until :meth:`stop`. ``heartbeat`` registers it as a live worker while it runs."""

    def __init__(
        self, queue: WorkQueue, *, heartbeat: bool = True, logger: logging.Logger | None = None
    ) -> None:
        super().__init__(logger)
        self.queue = queue
        self.heartbeat = heartbeat
        self._stop = threading.Event()

    def tick(self) -> Tick:
        """Read the schedules, fire the due slots (never re-sending a call whose reply was lost,
        RWQ-SCHED-011), and say when the next slot is. Redis errors are raised."""
        listing = self.queue.schedules()
        fired: list[str] = []
        now, nearest = listing.now_ms, None
        for stored, schedule, slots in self.due(listing):
            mark = stored.last_fired_ms
            if slots:
                reply: Fired = self.queue.fire(stored.name, stored.digest, slots)
                now, fired = reply.now_ms, fired + reply.added
                mark = reply.last_fired_ms if reply.last_fired_ms is not None else mark
                if reply.status != "ok":
                    continue  # gone, stale or paused: the next tick reads the schedules again
            nearest = self.next_slot(schedule, mark, now, nearest)
        return Tick(fired, now, nearest)

    def stop(self) -> None:
        """Ask :meth:`run` to return (safe from any thread or a signal handler)."""
        self._stop.set()

    def run(self) -> None:
        """Tick until :meth:`stop`: failures are logged and retried after a backoff."""
        backoff, beat_at = BACKOFF_MS, 0.0
        try:
            while not self._stop.is_set():
                if self.heartbeat and time.monotonic() >= beat_at:
                    self._beat()
                    beat_at = time.monotonic() + live.BEAT_MS / 1000
                try:
                    tick = self.tick()
                except (RwqError, RedisError) as exc:
                    self.logger.error("scheduler tick failed, next in %d ms: %s", backoff, exc)  # noqa: TRY400
                    self._stop.wait(backoff / 1000)
                    backoff = min(2 * backoff, MAX_BACKOFF_MS)
                    continue
                backoff = BACKOFF_MS
                for item in tick.fired:
                    self.logger.info("fired %s", item)
                wait = self.wait_ms(tick, time.monotonic())
                if self.heartbeat:
                    wait = min(wait, max(1.0, (beat_at - time.monotonic()) * 1000))
                self._stop.wait(wait / 1000)
        finally:
            if self.heartbeat:
                try:
                    self.queue.worker_leave(self.worker_id)
                except (RwqError, RedisError) as exc:
                    self.logger.warning("scheduler could not leave the live workers: %s", exc)

    def _beat(self) -> None:
        try:
            beat = self.queue.worker_beat(self.worker_id, live.TTL_MS, self.record())
            if self._started_ms is None:
                self._started_ms = beat.now_ms
                self.queue.worker_beat(self.worker_id, live.TTL_MS, self.record())
        except (RwqError, RedisError) as exc:
            self.logger.warning("scheduler heartbeat failed: %s", exc)


class AsyncScheduler(_Core):
    """:class:`Scheduler` for asyncio, on an :class:`~rwq.AsyncWorkQueue`."""

    def __init__(
        self, queue: AsyncWorkQueue, *, heartbeat: bool = True, logger: logging.Logger | None = None
    ) -> None:
        super().__init__(logger)
        self.queue = queue
        self.heartbeat = heartbeat
        self._stop = asyncio.Event()

    async def tick(self) -> Tick:
        """:meth:`Scheduler.tick`."""
        listing = await self.queue.schedules()
        fired: list[str] = []
        now, nearest = listing.now_ms, None
        for stored, schedule, slots in self.due(listing):
            mark = stored.last_fired_ms
            if slots:
                reply = await self.queue.fire(stored.name, stored.digest, slots)
                now, fired = reply.now_ms, fired + reply.added
                mark = reply.last_fired_ms if reply.last_fired_ms is not None else mark
                if reply.status != "ok":
                    continue
            nearest = self.next_slot(schedule, mark, now, nearest)
        return Tick(fired, now, nearest)

    def stop(self) -> None:
        """Ask :meth:`run` to return (from the loop's thread)."""
        self._stop.set()

    async def run(self) -> None:
        """:meth:`Scheduler.run`."""
        backoff, beat_at = BACKOFF_MS, 0.0
        try:
            while not self._stop.is_set():
                if self.heartbeat and time.monotonic() >= beat_at:
                    await self._beat()
                    beat_at = time.monotonic() + live.BEAT_MS / 1000
                try:
                    tick = await self.tick()
                except (RwqError, RedisError) as exc:
                    self.logger.error("scheduler tick failed, next in %d ms: %s", backoff, exc)  # noqa: TRY400
                    await self._wait(backoff)
                    backoff = min(2 * backoff, MAX_BACKOFF_MS)
                    continue
                backoff = BACKOFF_MS
                for item in tick.fired:
                    self.logger.info("fired %s", item)
                wait = self.wait_ms(tick, time.monotonic())
                if self.heartbeat:
                    wait = min(wait, max(1.0, (beat_at - time.monotonic()) * 1000))
                await self._wait(wait)
        finally:
            if self.heartbeat:
                try:
                    await self.queue.worker_leave(self.worker_id)
                except (RwqError, RedisError) as exc:
                    self.logger.warning("scheduler could not leave the live workers: %s", exc)

    async def _wait(self, ms: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), ms / 1000)

    async def _beat(self) -> None:
        try:
            beat = await self.queue.worker_beat(self.worker_id, live.TTL_MS, self.record())
            if self._started_ms is None:
                self._started_ms = beat.now_ms
                await self.queue.worker_beat(self.worker_id, live.TTL_MS, self.record())
        except (RwqError, RedisError) as exc:
            self.logger.warning("scheduler heartbeat failed: %s", exc)
