"""Issue 6 item 8: does an operation's cost stay flat as the queue grows?

Each comparison keeps both sizes in the same Redis at once and alternates timed rounds between
them, so drift on a shared machine hits both alike. rwq is compared with raw redis-py doing the
same list operations.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import redis

from bench.core import LEASE_MS, Bench, Config, Measurement, PeerResult, make_ids, payload, percentile
from rwq import Lease, WorkQueue

Log = Callable[[str], None]
PAYLOAD = payload()
SLOWLOG_US = 100


class _RawQueue:
    """A raw redis-py list queue with distinct values, so LREM has to look for its entry."""

    def __init__(self, r: redis.Redis, name: str) -> None:
        self.r, self.queue, self.processing = r, f"{name}:queue", f"{name}:processing"

    def fill(self, n: int) -> None:
        for start in range(0, n, 1000):
            ids = make_ids(min(1000, n - start))
            self.r.lpush(self.queue, *(item_id.encode() + PAYLOAD[32:] for item_id in ids))

    def lease(self) -> Any:
        value = self.r.lmove(self.queue, self.processing, "RIGHT", "LEFT")
        assert value is not None
        return value

    def complete(self, value: Any) -> None:
        self.r.lrem(self.processing, -1, value)


class _RwqQueue:
    """The shipped client on one prefix."""

    def __init__(self, r: redis.Redis, name: str) -> None:
        self.wq = WorkQueue(r, name)

    def fill(self, n: int) -> None:
        for start in range(0, n, 1000):
            self.wq.add_many([(item_id, PAYLOAD) for item_id in make_ids(min(1000, n - start))])

    def lease(self) -> Lease:
        held = self.wq.lease(LEASE_MS)
        assert held is not None
        return held

    def complete(self, held: Any) -> None:
        self.wq.complete(held)


class _FlatQueue(_RwqQueue):
    """The shipped client with profile flat: leases kept in ``<P>:in_flight`` (SPEC §18)."""

    def __init__(self, r: redis.Redis, name: str) -> None:
        self.wq = WorkQueue(r, name, flat_in_flight=True)


Queue = _RawQueue | _RwqQueue
MAKERS: dict[str, Callable[[redis.Redis, str], Queue]] = {"raw": _RawQueue, "rwq": _RwqQueue}
IN_FLIGHT_MAKERS: dict[str, Callable[[redis.Redis, str], Queue]] = {
    **MAKERS,
    "rwq-flat": _FlatQueue,
}


def _interleaved(
    combos: Sequence[tuple[str, int]], rounds: int, run_round: Callable[[str, int], float]
) -> dict[tuple[str, int], float]:
    totals = dict.fromkeys(combos, 0.0)
    for round_no in range(rounds):
        shift = round_no % len(combos)
        for combo in [*combos[shift:], *combos[:shift]]:
            totals[combo] += run_round(*combo)
    return totals


def pending(bench: Bench, config: Config, log: Log) -> Measurement:
    """lease + complete rate with a long ready queue, relative to a short one."""
    small, large = config.scale_small, config.scale_large
    m = Measurement(
        "scale_pending",
        f"lease+complete rate, {large:,} vs {small:,} pending",
        "rate ratio",
        "higher",
    )
    k = max(1, min(500, small // 2))
    rounds = max(1, config.scale_ops // k)
    m.notes.append(
        f"{rounds} rounds of {k} lease+complete per queue, refilled by {k} (untimed) after each "
        "round so the pending count stays put; rounds alternate between the two queues"
    )
    bench.flush()
    r = bench.client()
    queues: dict[tuple[str, int], Queue] = {}
    for peer, maker in MAKERS.items():
        for size in (small, large):
            queues[peer, size] = maker(r, f"sp{peer}{size}")
            queues[peer, size].fill(size)
    log(f"scale_pending: {large:,} pending per peer, used_memory {bench.used_memory() / 2**20:.0f} MiB")

    def run_round(peer: str, size: int) -> float:
        queue = queues[peer, size]
        started = time.perf_counter()
        for _ in range(k):
            queue.complete(queue.lease())
        elapsed = time.perf_counter() - started
        queue.fill(k)
        return elapsed

    totals = _interleaved(list(queues), rounds, run_round)
    _ratio_results(m, totals, (small, large), rounds * k, "lease + complete, one at a time")
    r.close()
    bench.flush()
    return m


def in_flight(bench: Bench, config: Config, log: Log, order: str, large: int) -> Measurement:
    """complete rate with many leased items, relative to few; ``order`` picks which one completes."""
    small = config.inflight_small
    m = Measurement(
        f"scale_inflight_{order}_{large}",
        f"complete rate, {large:,} vs {small:,} in flight ({order} first)",
        "rate ratio",
        "higher",
    )
    k = 200
    rounds = max(1, config.scale_ops // k)
    m.notes.append(
        f"each timed complete is of the {'oldest' if order == 'oldest' else 'a uniformly random'} "
        "in-flight item; an untimed lease replaces it, so the in-flight count stays put; "
        "rwq-flat is the shipped client with profile flat (leases in <P>:in_flight, SPEC §18)"
    )
    bench.flush()
    r = bench.client()
    queues: dict[tuple[str, int], Queue] = {}
    held: dict[tuple[str, int], list[Any]] = {}
    for peer, maker in IN_FLIGHT_MAKERS.items():
        for size in (small, large):
            queue = queues[peer, size] = maker(r, f"if{peer}{size}")
            queue.fill(size + rounds * k)
            held[peer, size] = [queue.lease() for _ in range(size)]
    rng = random.Random(6)

    def run_round(peer: str, size: int) -> float:
        queue, leases = queues[peer, size], held[peer, size]
        elapsed = 0.0
        for _ in range(k):
            item = leases.pop(rng.randrange(len(leases)) if order == "random" else 0)
            started = time.perf_counter()
            queue.complete(item)
            elapsed += time.perf_counter() - started
            leases.append(queue.lease())
        return elapsed

    totals = _interleaved(list(queues), rounds, run_round)
    _ratio_results(m, totals, (small, large), rounds * k, f"complete ({order} in-flight item first)")
    log(f"{m.id}: " + ", ".join(f"{p}={res.value:.2f}" for p, res in m.results.items()))
    r.close()
    bench.flush()
    return m


def _ratio_results(
    m: Measurement, totals: dict[tuple[str, int], float], sizes: tuple[int, int], ops: int, how: str
) -> None:
    small, large = sizes
    for peer in dict.fromkeys(peer for peer, _size in totals):
        rate_small, rate_large = ops / totals[peer, small], ops / totals[peer, large]
        m.results[peer] = PeerResult(
            rate_large / rate_small,
            [rate_large / rate_small],
            ops,
            how,
            {f"rate_at_{small}": rate_small, f"rate_at_{large}": rate_large},
        )


def light_clean(bench: Bench, config: Config, log: Log) -> Measurement:
    """The longest single light_clean script call while it walks ``clean_items`` in-flight items."""
    n = config.clean_items
    m = Measurement(
        "light_clean_max",
        f"longest light_clean script call, {n:,} abandoned items",
        "ms",
        "lower",
    )
    m.notes.append(
        f"SLOWLOG with slowlog-log-slower-than {SLOWLOG_US} during WorkQueue.light_clean() (at 0, "
        "Redis 7 also logs every command a script runs, which floods the log and slows the "
        "script); the figure is the longest single EVALSHA/EVAL, wall time on the server, so a "
        "preemption of redis-server on a busy machine counts; variants: default chunk 100, "
        "the largest chunk 1000, and all leases still live (nothing to requeue, the cursor walks "
        "the whole list); flat_*: the same with profile flat leases (in <P>:in_flight, SPEC §18), "
        "where a pass examines only the expired ones; each variant runs --repeats times and its "
        "least disturbed run (lowest max) counts, with *_max_ms_all_runs the worst"
    )
    m.skipped["rwq015"] = (
        "its light_clean is a client-side loop doing one LREM count 0 over the whole processing "
        "list per abandoned item (O(n^2) work, minutes at this size)"
    )
    r = bench.client()
    queues = {False: WorkQueue(r, "lc"), True: WorkQueue(r, "lc", flat_in_flight=True)}
    detail: dict[str, float] = {}
    variants = (
        ("chunk100", 100, 1, False),
        ("chunk1000", 1000, 1, False),
        ("live_chunk100", 100, LEASE_MS, False),
        ("flat_chunk100", 100, 1, True),
        ("flat_live_chunk100", 100, LEASE_MS, True),
    )
    for label, chunk, lease_ms, flat in variants:
        runs = [_clean_once(bench, queues[flat], n, chunk, lease_ms) for _ in range(config.repeats)]
        best = min(runs, key=lambda run: run["max_ms"])  # the least disturbed run, as elsewhere
        detail.update({f"{label}_{key}": value for key, value in best.items()})
        detail[f"{label}_max_ms_all_runs"] = max(run["max_ms"] for run in runs)
    m.results["rwq"] = PeerResult(
        detail["chunk100_max_ms"],
        [detail["chunk100_max_ms"]],
        n,
        "WorkQueue.light_clean() (chunk 100), all leases expired",
        detail,
    )
    log(
        "light_clean max ms: "
        + ", ".join(f"{label}={detail[f'{label}_max_ms']:.2f}" for label, *_ in variants)
        + "; us per item: "
        + ", ".join(f"{label}={detail[f'{label}_us_per_item']:.2f}" for label, *_ in variants)
    )
    r.close()
    bench.flush()
    return m


def _clean_once(bench: Bench, wq: WorkQueue, n: int, chunk: int, lease_ms: int) -> dict[str, float]:
    """Fill, lease (1 ms leases: abandoned), then one light_clean() under SLOWLOG."""
    r = bench.admin
    bench.flush()
    for start in range(0, n, 1000):
        wq.add_many([(item_id, PAYLOAD) for item_id in make_ids(min(1000, n - start))])
    for _ in range(0, n, 1000):
        wq.lease_many(count=1000, lease_ms=lease_ms)
    time.sleep(0.2)  # every 1 ms lease has expired
    calls = 2 * (n // chunk) + 1000
    previous = {key: str(value) for key, value in r.config_get("slowlog-*").items()}
    r.config_set("slowlog-max-len", calls)
    r.config_set("slowlog-log-slower-than", SLOWLOG_US)
    r.slowlog_reset()
    expected = 0 if lease_ms == LEASE_MS else n
    try:
        started = time.perf_counter()
        requeued = len(wq.light_clean(chunk=chunk).requeued)
        elapsed = time.perf_counter() - started
        entries: Any = r.slowlog_get(calls)
    finally:
        r.config_set("slowlog-log-slower-than", previous["slowlog-log-slower-than"])
        r.config_set("slowlog-max-len", previous["slowlog-max-len"])
    if requeued != expected:
        raise RuntimeError(f"light_clean requeued {requeued}, expected {expected}")
    durations = [int(entry["duration"]) for entry in entries if _command(entry).startswith("EVAL")]
    durations = durations or [SLOWLOG_US]  # none logged: every call was faster than that
    return {
        "max_ms": max(durations) / 1000,
        "p99_ms": percentile(durations, 0.99) / 1000,
        "median_ms": statistics.median(durations) / 1000,
        "logged_calls": len(durations),
        "us_per_item": elapsed / n * 1e6,
    }


def _command(entry: dict[str, Any]) -> str:
    command = entry.get("command", b"")
    text = command.decode(errors="replace") if isinstance(command, bytes) else str(command)
    return text.upper()


def in_flight_all(bench: Bench, config: Config, log: Log) -> list[Measurement]:
    """The complete rate at each large in-flight count in random order, and at the first in lease order."""
    return [
        *(in_flight(bench, config, log, "random", large) for large in config.inflight_large),
        in_flight(bench, config, log, "oldest", config.inflight_large[0]),
    ]
