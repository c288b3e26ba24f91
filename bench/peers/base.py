"""What every peer offers the scenarios; an operation a peer lacks raises :class:`Unsupported`."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Barrier
from typing import Any, ClassVar

from bench.core import Bench


class Unsupported(Exception):
    """The peer has no operation comparable to the one measured."""


@dataclass(frozen=True)
class ProcessJob:
    """What one drain process is told: where Redis is and how many items exist in all."""

    url: str
    total: int
    index: int


Drained = tuple[float, float, int]
"""What a drain process reports: when it started, when it completed its last item, how many."""

DrainProcess = Callable[[ProcessJob, Barrier, Any], Drained]
"""``fn(job, barrier, counter)``: wait at the barrier, drain until empty, report."""

WakeConsumer = Callable[[str, int, Connection], None]
"""``fn(url, samples, conn)``: send "ready", then ``perf_counter()`` each time a lease returns."""


class Peer:
    """One queue implementation under test, bound to the benchmark's Redis."""

    name: ClassVar[str]
    label: ClassVar[str]
    prototype: ClassVar[bool] = False
    slow: ClassVar[bool] = False
    max_n: ClassVar[int] = 1 << 62
    """At most this many items per run (a slow peer would otherwise dominate the run time)."""
    HOW: ClassVar[Mapping[str, str]] = {}
    """Operation -> what it does for this peer, for the report."""

    def __init__(self, bench: Bench) -> None:
        self.bench = bench

    def how(self, operation: str) -> str:
        """A short description of what ``operation`` does for this peer (for the report)."""
        return self.HOW.get(operation, "")

    def drain_target(self) -> DrainProcess | None:
        """The module-level function each drain process runs, or None."""
        return None

    def wake_target(self) -> WakeConsumer | None:
        """The module-level function the blocked consumer process runs, or None."""
        return None

    def warm_up(self, payload: bytes) -> None:
        """Load scripts and open connections, so no measurement pays for it."""

    def enqueue_one(self, ids: Sequence[str], payload: bytes) -> float:
        """Add every id, one call each; the elapsed seconds."""
        raise Unsupported

    def enqueue_batch(self, ids: Sequence[str], payload: bytes, batch: int) -> float:
        """Add every id, ``batch`` per call; the elapsed seconds."""
        raise Unsupported

    def fill(self, ids: Sequence[str], payload: bytes) -> None:
        """Add every id as fast as the peer can (untimed setup)."""
        raise Unsupported

    def drain_one(self, n: int) -> float:
        """Lease and complete ``n`` ready items one at a time; the elapsed seconds."""
        raise Unsupported

    def drain_batch(self, n: int, batch: int) -> float:
        """Lease and complete ``n`` ready items ``batch`` at a time; the elapsed seconds."""
        raise Unsupported

    def wake_add(self, item_id: str, payload: bytes) -> None:
        """Add one item for a blocked consumer."""
        raise Unsupported

    def close(self) -> None:
        """Release connections."""


_shared: dict[str, Any] = {}


def init_pool_worker(barrier: Barrier, counter: Any) -> None:
    """Pool initializer: keep the start barrier and the shared counter for the tasks to come."""
    _shared["barrier"], _shared["counter"] = barrier, counter


def run_drain(target: DrainProcess, job: ProcessJob) -> tuple[float, float, int, float]:
    """A pool task: one process's share of a multi-process drain, and the CPU seconds it used."""
    cpu = time.process_time()
    started, last, done = target(job, _shared["barrier"], _shared["counter"])
    return started, last, done, time.process_time() - cpu


def now() -> float:
    """The cross-process clock: ``perf_counter`` is CLOCK_MONOTONIC on Linux."""
    return time.perf_counter()


def check_drained(done: int, n: int, peer: str) -> None:
    """Refuse a drain that did not process exactly ``n`` items (a broken peer, not a fast one)."""
    if done != n:
        raise RuntimeError(f"{peer}: drained {done} items, expected {n}")
