"""Shared pieces: the run's configuration, its own Redis, payloads, ids and result records."""

from __future__ import annotations

import gc
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import redis

from rwq.conformance.redis_server import RedisServer

LEASE_MS = 60_000
PAYLOAD_BYTES = 100


@dataclass(frozen=True)
class Config:
    """How much work each measurement does; ``quick`` shrinks everything for a smoke run."""

    n: int = 20_000
    quick: bool = False
    repeats: int = 2
    batch: int = 100
    processes: int = 4
    wake_samples: int = 300
    slow_n: int = 4_000
    profile_n: int = 1_000
    scale_small: int = 1_000
    scale_large: int = 1_000_000
    scale_ops: int = 10_000
    inflight_small: int = 1_000
    inflight_large: tuple[int, ...] = (10_000, 50_000, 100_000)
    clean_items: int = 100_000
    peers: tuple[str, ...] = ()

    @classmethod
    def quick_mode(cls, peers: tuple[str, ...] = ()) -> Config:
        """Small sizes: every code path runs, nothing is measured well."""
        return cls(
            n=1_000,
            quick=True,
            repeats=1,
            wake_samples=30,
            slow_n=200,
            profile_n=200,
            scale_large=20_000,
            scale_ops=500,
            inflight_large=(5_000,),
            clean_items=5_000,
            peers=peers,
        )


def payload(size: int = PAYLOAD_BYTES) -> bytes:
    """The job payload: ``size`` printable bytes (JSON- and str-safe for every peer)."""
    return (b"0123456789abcdef" * (size // 16 + 1))[:size]


def make_ids(n: int) -> list[str]:
    """``n`` fresh random ids, 32 hex characters each (what redis-work-queue generates)."""
    return [uuid.uuid4().hex for _ in range(n)]


class Bench:
    """The run's own redis-server on 127.0.0.1 and helpers to reset and inspect it."""

    def __init__(self, server: RedisServer) -> None:
        self.server = server
        self.admin = server.client()

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def port(self) -> int:
        return self.server.port

    def client(self) -> redis.Redis:
        """A new bytes-mode redis-py client of the benchmark's server."""
        return self.server.client()

    def flush(self) -> None:
        """Empty the database (scripts stay cached) and settle the allocator."""
        self.admin.flushall(asynchronous=False)
        gc.collect()

    def used_memory(self) -> int:
        """``INFO memory`` used_memory less client buffers (a big EVALSHA leaves a big query buffer)."""
        info = self.admin.info("memory")
        return int(info["used_memory"]) - int(info.get("mem_clients_normal", 0))

    def redis_cpu_s(self) -> float:
        """CPU seconds redis-server has used so far (INFO cpu, user + sys)."""
        info = self.admin.info("cpu")
        return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])

    def blocked_clients(self) -> int:
        """Clients blocked in a blocking command right now."""
        return int(self.admin.info("clients")["blocked_clients"])

    def info(self) -> dict[str, Any]:
        """``INFO server``."""
        return dict(self.admin.info("server"))


@contextmanager
def stopwatch() -> Iterator[Callable[[], float]]:
    """Times the block with ``perf_counter``; the yielded callable returns the elapsed seconds."""
    start = time.perf_counter()
    end: list[float] = []
    yield lambda: (end[0] if end else time.perf_counter()) - start
    end.append(time.perf_counter())


Better = Literal["higher", "lower"]


@dataclass
class PeerResult:
    """One peer's figure for one measurement: the best sample, all samples and how it was taken."""

    value: float
    samples: list[float]
    n: int
    how: str
    detail: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value, "samples": self.samples, "n": self.n, "how": self.how}
        if self.detail:
            out["detail"] = self.detail
        return out


@dataclass
class Skipped:
    """A peer that could not be measured here, and why."""

    reason: str


@dataclass
class Measurement:
    """One row of the report: a figure per peer, compared with a raw client of the same run (raw
    redis-py; the Go section's rows with raw go-redis, the TypeScript section's with raw ioredis:
    their ``baseline``)."""

    id: str
    title: str
    unit: str
    better: Better
    results: dict[str, PeerResult] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    baseline: str = "raw"

    def ratio(self, peer: str, baseline: str | None = None) -> float | None:
        """``peer`` / ``baseline`` (the row's own by default), when both were measured."""
        a, b = self.results.get(peer), self.results.get(baseline or self.baseline)
        if a is None or b is None or b.value == 0:
            return None
        return a.value / b.value

    def to_json(self) -> dict[str, Any]:
        ratios = {peer: self.ratio(peer) for peer in self.results if peer != self.baseline}
        extra = {} if self.baseline == "raw" else {"baseline": self.baseline}
        return {
            "id": self.id,
            "title": self.title,
            "unit": self.unit,
            "better": self.better,
            "results": {peer: result.to_json() for peer, result in self.results.items()},
            "ratio_to_raw": {peer: ratio for peer, ratio in ratios.items() if ratio is not None},
            "skipped": self.skipped,
            "notes": self.notes,
            **extra,
        }


def best(samples: list[float], better: Better) -> float:
    """The best sample: the least disturbed run on a shared machine."""
    return max(samples) if better == "higher" else min(samples)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) by nearest rank."""
    ordered = sorted(float(value) for value in values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]
