"""The measurements of issue 6, each run for every peer on the same Redis, peers interleaved."""

from __future__ import annotations

import gc
import multiprocessing as mp
import random
import statistics
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench import golang, scaling, sharding, typescript
from bench.core import Bench, Config, Measurement, PeerResult, make_ids, payload, percentile
from bench.peers.base import (
    Peer,
    ProcessJob,
    Unsupported,
    check_drained,
    init_pool_worker,
    now,
    run_drain,
)

PROCESS_TIMEOUT_S = 300
Log = Callable[[str], None]


Setup = Callable[[Peer, int], None]
"""Untimed preparation: ``(peer, n)``."""
Timed = Callable[[Peer, int, int], float]
"""The timed work on items ``start .. start + count``: ``(peer, start, count) -> seconds``."""
TurnSetup = Callable[[Peer, int, int], None]
"""Untimed preparation of items ``start .. start + count`` just before they are timed."""


@dataclass
class Samples:
    """What the timed runs of one peer gave: items/s per run, with client CPU per item."""

    rates: list[float] = field(default_factory=list)
    cpu_us: list[float] = field(default_factory=list)
    n: int = 0
    turn_rates: list[float] = field(default_factory=list)


class Scenarios:
    """Runs every measurement against every selected peer."""

    def __init__(self, bench: Bench, config: Config, peers: dict[str, Peer], log: Log) -> None:
        self.bench = bench
        self.config = config
        self.peers = peers
        self.log = log
        self.payload = payload()
        self.ids = make_ids(config.n)
        self._pool: tuple[Any, Any, Any] | None = None
        self._process_cpu: dict[str, list[float]] = {}
        """Per peer, over its multi-process drains: client CPU s, Redis CPU s, items."""

    # -- helpers ---------------------------------------------------------------------------------

    def _n(self, peer: Peer) -> int:
        return min(self.config.n, self.config.slow_n, peer.max_n) if peer.slow else self.config.n

    def _order(self, round_no: int) -> list[Peer]:
        peers = list(self.peers.values())
        shift = round_no % len(peers) if peers else 0
        return peers[shift:] + peers[:shift]

    def _skip(self, m: Measurement, peer: Peer, exc: BaseException) -> None:
        if isinstance(exc, Unsupported):
            m.skipped[peer.name] = str(exc) or "no comparable operation"
        else:
            m.skipped[peer.name] = f"error: {type(exc).__name__}: {exc}"
            self.log(f"[red]{peer.name} failed in {m.id}[/red]\n{traceback.format_exc()}")

    def _setup(self, m: Measurement, peers: list[Peer], setup: Setup, n: int) -> list[Peer]:
        ready = []
        for peer in peers:
            if peer.name in m.skipped:
                continue
            try:
                setup(peer, n)
            except Exception as exc:
                self._skip(m, peer, exc)
                continue
            ready.append(peer)
        return ready

    def _interleaved(
        self,
        m: Measurement,
        setup: Setup,
        timed: Timed,
        slice_size: int,
        samples: dict[str, Samples],
        *,
        turn_setup: TurnSetup | None = None,
    ) -> None:
        """Every fast peer's data in Redis at once; peers take turns, ``slice_size`` items each.

        ``turn_setup`` (untimed) prepares each turn's items instead of ``setup`` preparing all.
        """
        n = self.config.n
        fast = [peer for peer in self.peers.values() if not peer.slow]
        for round_no in range(self.config.repeats):
            self.bench.flush()
            active = self._setup(m, fast, setup, 0 if turn_setup else n)
            seconds = dict.fromkeys((peer.name for peer in active), 0.0)
            cpu = dict.fromkeys(seconds, 0.0)
            for index, start in enumerate(range(0, n, slice_size)):
                count = min(slice_size, n - start)
                shift = (index + round_no) % max(len(active), 1)
                for peer in active[shift:] + active[:shift]:
                    if peer.name in m.skipped:
                        continue
                    try:
                        if turn_setup is not None:
                            turn_setup(peer, start, count)
                        gc.collect()
                        before = time.process_time()
                        took = timed(peer, start, count)
                        cpu[peer.name] += time.process_time() - before
                    except Exception as exc:
                        self._skip(m, peer, exc)
                        continue
                    seconds[peer.name] += took
                    samples.setdefault(peer.name, Samples(n=n)).turn_rates.append(count / took)
            for name, total in seconds.items():
                if name not in m.skipped:
                    got = samples.setdefault(name, Samples(n=n))
                    got.rates.append(n / total)
                    got.cpu_us.append(cpu[name] / n * 1e6)

    def _whole(
        self,
        m: Measurement,
        peers: list[Peer],
        setup: Setup,
        timed: Timed,
        samples: dict[str, Samples],
        *,
        turn_setup: TurnSetup | None = None,
    ) -> None:
        """Each peer alone on an emptied Redis, once: the slow peers."""
        for round_no in range(self.config.repeats):
            shift = round_no % max(len(peers), 1)
            for peer in peers[shift:] + peers[:shift]:
                if peer.name in m.skipped or (peer.slow and round_no > 0):
                    continue
                n = self._n(peer)
                self.bench.flush()
                if not self._setup(m, [peer], setup, n):
                    continue
                try:
                    if turn_setup is not None:
                        turn_setup(peer, 0, n)
                    gc.collect()
                    before = time.process_time()
                    seconds = timed(peer, 0, n)
                    cpu = time.process_time() - before
                except Exception as exc:
                    self._skip(m, peer, exc)
                    continue
                got = samples.setdefault(peer.name, Samples(n=n))
                got.rates.append(n / seconds)
                got.cpu_us.append(cpu / n * 1e6)

    def _server_profile(self, m: Measurement, setup: Setup, timed: Timed) -> dict[str, dict[str, float]]:
        """A separate short run per peer with INFO commandstats reset: Redis's share of the work."""
        out = {}
        for peer in self.peers.values():
            if peer.name in m.skipped:
                continue
            n = min(self._n(peer), self.config.profile_n)
            try:
                self.bench.flush()
                setup(peer, n)
                self.bench.admin.config_resetstat()
                timed(peer, 0, n)
                stats = self.bench.admin.info("commandstats")
            except Exception as exc:
                self._skip(m, peer, exc)
                continue
            usec = sum(float(entry["usec"]) for entry in stats.values())
            calls = sum(int(entry["calls"]) for entry in stats.values()) - 1  # the INFO itself
            out[peer.name] = {"server_us_per_item": usec / n, "commands_per_item": calls / n}
        return out

    def _throughput(
        self,
        m: Measurement,
        operation: str,
        setup: Setup,
        timed: Timed,
        *,
        slice_size: int = 500,
        turn_setup: TurnSetup | None = None,
        profile: bool = True,
    ) -> Measurement:
        samples: dict[str, Samples] = {}
        self._interleaved(m, setup, timed, slice_size, samples, turn_setup=turn_setup)
        slow = [peer for peer in self.peers.values() if peer.slow]
        self._whole(m, slow, setup, timed, samples, turn_setup=turn_setup)
        server = self._server_profile(m, setup, timed) if profile else {}
        m.notes.append(
            f"fast peers take turns of {slice_size} items, all on one Redis, {self.config.repeats} "
            "rounds; their figure is the median of their turns' rates (a burst of load from "
            "other processes spoils a few turns, not the figure); samples are whole-round rates; "
            f"bullmq and rq run alone once, on up to {self.config.slow_n} items (rq: 1,000), and "
            "their figure is that run's rate"
        )
        for name, got in samples.items():
            if name in m.skipped:
                continue
            top = got.rates.index(max(got.rates))
            value = statistics.median(got.turn_rates) if got.turn_rates else got.rates[top]
            detail = {
                "us_per_item": 1e6 / value,
                "best_round_rate": got.rates[top],
                "client_cpu_us_per_item": got.cpu_us[top],
                **server.get(name, {}),
            }
            if got.turn_rates:
                detail["turns"] = len(got.turn_rates)
            m.results[name] = PeerResult(value, got.rates, got.n, self.peers[name].how(operation), detail)
        self.log(f"{m.id}: " + ", ".join(f"{k}={v.value:,.0f}" for k, v in m.results.items()))
        return m

    # -- 1, 2: enqueue ---------------------------------------------------------------------------

    def enqueue_one(self) -> Measurement:
        m = Measurement("enqueue_one", "enqueue, 1 item per call", "items/s", "higher")
        return self._throughput(
            m,
            "enqueue_one",
            lambda peer, n: None,
            lambda peer, start, count: peer.enqueue_one(self.ids[start : start + count], self.payload),
        )

    def enqueue_batch(self) -> Measurement:
        batch = self.config.batch
        m = Measurement("enqueue_batch", f"enqueue, {batch} items per call", "items/s", "higher")
        return self._throughput(
            m,
            "enqueue_batch",
            lambda peer, n: None,
            lambda peer, start, count: peer.enqueue_batch(
                self.ids[start : start + count], self.payload, batch
            ),
            slice_size=20 * batch,
        )

    # -- 3, 4, 5: drain --------------------------------------------------------------------------

    def _fill(self, peer: Peer, n: int) -> None:
        peer.fill(self.ids[:n], self.payload)

    def drain_one(self) -> Measurement:
        m = Measurement("drain_one", "drain, 1 consumer, lease + complete", "items/s", "higher")
        return self._throughput(m, "drain_one", self._fill, lambda peer, _start, count: peer.drain_one(count))

    def drain_batch(self) -> Measurement:
        batch = self.config.batch
        m = Measurement("drain_batch", f"drain, 1 consumer, {batch} per lease/complete", "items/s", "higher")
        return self._throughput(
            m,
            "drain_batch",
            self._fill,
            lambda peer, _start, count: peer.drain_batch(count, batch),
            slice_size=20 * batch,
        )

    def drain_processes(self) -> Measurement:
        k = self.config.processes
        m = Measurement("drain_processes", f"drain, {k} consumer processes", "items/s", "higher")
        m.notes.append(
            "wall time from the common start (a barrier after each process connected and loaded "
            "its scripts) to the last item completed by any process"
        )
        m.notes.append(
            "client_cpu_us_per_item sums the drain processes' CPU; redis_cpu_us_per_item is INFO "
            "cpu (user + sys) of redis-server over the same drains"
        )
        self._process_cpu = {}
        self._throughput(
            m,
            "drain_process",
            lambda peer, n: None,
            self._processes,
            slice_size=max(self.config.n // 8, 100),
            turn_setup=lambda peer, start, count: peer.fill(self.ids[start : start + count], self.payload),
            profile=False,
        )
        for name, (client_s, redis_s, items) in self._process_cpu.items():
            if name in m.results and items:
                m.results[name].detail["client_cpu_us_per_item"] = client_s / items * 1e6
                m.results[name].detail["redis_cpu_us_per_item"] = redis_s / items * 1e6
        return m

    def _drain_pool(self) -> tuple[Any, Any, Any]:
        """The drain processes, started once: each task first waits at the common barrier."""
        if self._pool is None:
            ctx = mp.get_context("spawn")
            k = self.config.processes
            barrier = ctx.Barrier(k + 1, timeout=PROCESS_TIMEOUT_S)
            counter = ctx.Value("q", 0)
            pool = ctx.Pool(k, initializer=init_pool_worker, initargs=(barrier, counter))
            self._pool = (pool, barrier, counter)
        return self._pool

    def close(self) -> None:
        """Stop the drain processes."""
        if self._pool is not None:
            self._pool[0].terminate()
            self._pool[0].join()
            self._pool = None

    def _processes(self, peer: Peer, _start: int, n: int) -> float:
        target = peer.drain_target()
        if target is None:
            raise Unsupported("no multi-process drain")
        pool, barrier, counter = self._drain_pool()
        counter.value = 0
        pending = [
            pool.apply_async(run_drain, (target, ProcessJob(self.bench.url, n, i)))
            for i in range(self.config.processes)
        ]
        redis_before = self.bench.redis_cpu_s()
        try:
            barrier.wait()
            results = [task.get(PROCESS_TIMEOUT_S) for task in pending]
        except BaseException:
            self.close()  # a stuck or broken pool is not reused
            raise
        redis_s = self.bench.redis_cpu_s() - redis_before
        check_drained(sum(done for _s, _l, done, _c in results), n, peer.name)
        totals = self._process_cpu.setdefault(peer.name, [0.0, 0.0, 0.0])
        totals[0] += sum(cpu for _s, _l, _d, cpu in results)
        totals[1] += redis_s
        totals[2] += n
        return float(max(last for _s, last, _d, _c in results) - min(start for start, _l, _d, _c in results))

    # -- 6: memory -------------------------------------------------------------------------------

    def memory(self) -> Measurement:
        m = Measurement("memory", "Redis memory per pending item", "bytes/item", "lower")
        m.notes.append(
            "the slope of INFO memory (used_memory - mem_clients_normal) over the second half of "
            "N items: after filling N minus after filling N/2, over N/2 (fixed costs such as the "
            "script cache and list headers do not count); each peer fills with its batched add"
        )
        n = self.config.n
        half = n // 2
        for peer in self.peers.values():
            if peer.prototype:
                m.skipped[peer.name] = "same keys as rwq"
                continue
            try:
                self.bench.flush()
                peer.fill(self.ids[:half], self.payload)
                before = self.bench.used_memory()
                peer.fill(self.ids[half:n], self.payload)
                per_item = (self.bench.used_memory() - before) / (n - half)
            except Exception as exc:
                self._skip(m, peer, exc)
                continue
            m.results[peer.name] = PeerResult(per_item, [per_item], n, peer.how("memory"))
        self.log("memory: " + ", ".join(f"{k}={v.value:,.0f}" for k, v in m.results.items()))
        return m

    # -- 7: wake-up latency ----------------------------------------------------------------------

    def wake(self) -> Measurement:
        m = Measurement("wake_median", "blocked consumer wake-up, median", "ms", "lower")
        m.notes.append(
            "one consumer process per peer, each blocked in its lease on its own queue; for each "
            "sample the producer takes the peers in turn: it waits until Redis reports every "
            "consumer blocked, sleeps 1-3 ms, stamps perf_counter and adds one item; the "
            "consumer stamps when its lease returns (CLOCK_MONOTONIC, shared by the processes)"
        )
        self.bench.flush()
        consumers = self._start_consumers(m)
        latencies: dict[str, list[float]] = {name: [] for name in consumers}
        try:
            for index, item_id in enumerate(make_ids(self.config.wake_samples)):
                names = list(consumers)
                shift = index % max(len(names), 1)
                for name in names[shift:] + names[:shift]:
                    peer, _proc, conn = consumers[name]
                    try:
                        latencies[name].append(self._one_wake(peer, conn, item_id, len(consumers)))
                    except Exception as exc:
                        self._skip(m, peer, exc)
                        self._stop_consumer(consumers.pop(name))
        finally:
            for consumer in consumers.values():
                self._stop_consumer(consumer)
        for name, values in latencies.items():
            if name in m.skipped or not values:
                continue
            detail = {
                "p50_ms": statistics.median(values),
                "p90_ms": percentile(values, 0.90),
                "p99_ms": percentile(values, 0.99),
                "max_ms": max(values),
                "mean_ms": statistics.fmean(values),
            }
            m.results[name] = PeerResult(
                detail["p50_ms"], values, len(values), self.peers[name].how("wake"), detail
            )
        self.log(
            "wake median/p99 ms: "
            + ", ".join(f"{k}={v.value:.3f}/{v.detail['p99_ms']:.3f}" for k, v in m.results.items())
        )
        return m

    def _start_consumers(self, m: Measurement) -> dict[str, tuple[Peer, Any, Any]]:
        ctx = mp.get_context("spawn")
        started: dict[str, tuple[Peer, Any, Any]] = {}
        for peer in self.peers.values():
            target = peer.wake_target()
            if target is None:
                m.skipped[peer.name] = "no blocking lease of its own"
                continue
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=target, args=(self.bench.url, 1 << 30, child), daemon=True)
            proc.start()
            started[peer.name] = (peer, proc, parent)
        for name, (peer, _proc, parent) in list(started.items()):
            try:
                _expect(parent, 60, "the consumer did not start")
            except Exception as exc:
                self._skip(m, peer, exc)
                self._stop_consumer(started.pop(name))
        return started

    def _one_wake(self, peer: Peer, conn: Any, item_id: str, consumers: int) -> float:
        """One sample, in ms: all consumers blocked, a short pause, then add and time the lease."""
        self._wait_blocked(consumers)
        time.sleep(random.uniform(0.001, 0.003))
        sent = now()
        peer.wake_add(item_id, self.payload)
        return (float(_expect(conn, 30, "the consumer did not get the item")) - sent) * 1000

    @staticmethod
    def _stop_consumer(consumer: tuple[Peer, Any, Any]) -> None:
        _peer, proc, conn = consumer
        proc.kill()
        proc.join(10)
        conn.close()

    def _wait_blocked(self, count: int) -> None:
        deadline = time.monotonic() + 30
        while self.bench.blocked_clients() < count:
            if time.monotonic() > deadline:
                raise TimeoutError("a consumer never blocked")
            time.sleep(0.0005)


def _expect(conn: Any, timeout_s: float, error: str) -> Any:
    """The next message on a pipe (or TimeoutError)."""
    if not conn.poll(timeout_s):
        raise TimeoutError(error)
    return conn.recv()


def run_all(scenarios: Scenarios, only: Sequence[str] = ()) -> list[Measurement]:
    """Every measurement, in issue order (``only`` selects some by id prefix)."""
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("enqueue_one", scenarios.enqueue_one),
        ("enqueue_batch", scenarios.enqueue_batch),
        ("drain_one", scenarios.drain_one),
        ("drain_batch", scenarios.drain_batch),
        ("drain_processes", scenarios.drain_processes),
        ("memory", scenarios.memory),
        ("wake", scenarios.wake),
        ("scale_pending", lambda: scaling.pending(scenarios.bench, scenarios.config, scenarios.log)),
        ("scale_inflight", lambda: scaling.in_flight_all(scenarios.bench, scenarios.config, scenarios.log)),
        ("light_clean", lambda: scaling.light_clean(scenarios.bench, scenarios.config, scenarios.log)),
        ("shard_cpu", lambda: sharding.shard_cpu(scenarios.config, scenarios.log)),
        ("go", lambda: golang.measure(scenarios.bench, scenarios.config, scenarios.log)),
        ("ts", lambda: typescript.measure(scenarios.bench, scenarios.config, scenarios.log)),
    ]
    out: list[Measurement] = []
    try:
        _run_steps(scenarios, steps, only, out)
    finally:
        scenarios.close()
    return out


def _run_steps(
    scenarios: Scenarios,
    steps: list[tuple[str, Callable[[], Any]]],
    only: Sequence[str],
    out: list[Measurement],
) -> None:
    for name, step in steps:
        if only and not any(name.startswith(prefix) for prefix in only):
            continue
        started = time.monotonic()
        result = step()
        out.extend(result if isinstance(result, list) else [result])
        scenarios.log(f"[dim]{name} took {time.monotonic() - started:.1f} s[/dim]")
