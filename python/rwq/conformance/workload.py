"""A concurrent workload under faults, checked from its history (Jepsen style).

``workers`` sessions, each in an adapter process of its own and driven by a runner thread, run a
seeded random mix of add, lease (blocking too), renew, complete, release and light_clean on one
queue, while a nemesis thread flushes the script cache, kills sessions' connections (also right
behind a server stall, so that replies get lost after their script ran), kills adapter processes
(a worker then restarts in a new one, forgetting its leases) and moves the frozen server clock:
small steps, so blocked leases time out and short leases expire, and jumps past every lease.
Every operation is logged as invoke / ok / fail / info with bounds on the virtual clock. The run
stops by itself after ``max_ops`` operations or ``wall_s`` seconds, then drains the queue (clock
past every lease, clean, lease and complete until empty), and the checkers of
:mod:`rwq.conformance.checkers` judge the history and the keys left behind.

When the adapter declares the ``retry`` profile, a retry policy (at most ``MAX_ATTEMPTS`` leases,
a fixed backoff, no jitter, no trimming) is set through a session of its own before the run, and
workers also ``fail`` leases; the drain then reads the dead set (``dead_list`` and ``dead_get``),
which the checkers count as neither lost nor completed. When it declares ``delay``, some adds and
releases carry a small ``delay_ms``. The drain's clock jump passes every due time. When it
declares ``flat``, every second worker leases with ``flat_in_flight``, so flat and non-flat
clients share the queue.
"""

from __future__ import annotations

import contextlib
import json
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from redis.exceptions import RedisError

from . import data
from .adapter import AdapterFailure, AdapterProcess
from .cases import Case
from .checkers import FAIL, INFO, INVOKE, OK, Anomaly, Event, check
from .encoding import Json, encode_bytes
from .environment import RedisEnvironment, raw_client
from .execution import STATUS_BY_KIND, CaseRun, Failure
from .pool import SUBJECT, AdapterPool

CASE = Case(
    id="workload/faults",
    title="concurrent workers under faults lose nothing, lease nothing twice, complete once",
    group="workload",
    source="(generated) rwq.conformance.workload",
    requirements=(
        "RWQ-DELIVERY-001",
        "RWQ-DELIVERY-002",
        "RWQ-DELIVERY-003",
        "RWQ-COMPLETE-002",
        "RWQ-GHOST-001",
        "RWQ-ENC-002",
        "RWQ-KEYS-005",
        "RWQ-SCRIPT-002",
        "RWQ-FAIL-001",
        "RWQ-FAIL-002",
        "RWQ-FAIL-004",
        "RWQ-CLEAN-006",
    ),
    profiles=("core",),
    needs=("frozen-clock", "managed-redis", "multi-process"),
    sessions={},
    steps=(),
)
LEASE_MS = (2000, 5000, 20_000)
TICK_MS = 1000  # the nemesis' small clock step: a blocked lease's BLMOVE waits at most this
JUMP_MS = max(LEASE_MS) + 1
STALL_S = 0.02
MAX_ATTEMPTS = 3
BACKOFF_MS = (1000, 2000, 3000)
DELAY_MS = (500, 1500, 3000)  # all below JUMP_MS: the drain's jump makes every delayed item due
FAULTS = ("script-flush", "kill-connections", "stall-kill", "kill-process")
DEFINITE = frozenset({"INVALID_ARGUMENT", "LEASE_LOST"})
"""Error codes that say an operation changed nothing; any other error leaves it unknown."""


@dataclass(frozen=True)
class WorkloadConfig:
    """The size of a run; the defaults stay well under 20 s."""

    workers: int = 3
    max_ops: int = 300
    wall_s: float = 10.0
    seed: int = 1
    profiles: tuple[str, ...] | None = None
    """The profiles to exercise besides core (``retry``, ``delay``); None: those the adapter declares."""
    declared_keys: bool = False
    """Open every worker with option ``declared_keys`` (profile declared-keys, SPEC 20)."""


class History:
    """The shared, ordered log, and the virtual clock bounds events carry.

    The nemesis raises ``high`` before it moves the server clock and ``low`` after the server
    sees the new time, so an operation took effect between the ``low`` at its invocation and
    the ``high`` at its completion."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.low = self.high = 0
        self.started = time.monotonic()
        self._lock = threading.Lock()

    def log(self, process: str, kind: str, f: str, value: Json) -> None:
        at_ms = int((time.monotonic() - self.started) * 1000)
        with self._lock:
            clock = self.low if kind == INVOKE else self.high
            self.events.append(Event(len(self.events), process, kind, f, value, clock, at_ms))

    def advance(self, env: RedisEnvironment, ns: str, ms: int, process: str) -> None:
        """Move the server clock forward by ``ms``, and log it."""
        with self._lock:
            self.high += ms
        env.advance(ns, ms)
        with self._lock:
            self.low += ms
        self.log(process, INFO, "clock-jump", {"ms": ms})


@dataclass
class Worker:
    """One session in an adapter process of its own, and the leases it believes it holds."""

    name: str
    client_name: str
    rng: random.Random
    process: AdapterProcess | None = None
    held: list[Json] = field(default_factory=list)
    added: int = 0
    killed: bool = False


class Workload:
    """One run: its namespace, workers, nemesis, history and drain."""

    def __init__(self, env: RedisEnvironment, pool: AdapterPool, config: WorkloadConfig) -> None:
        self.env = env
        self.pool = pool
        self.config = config
        self.ns = env.new_namespace()
        token = self.ns[self.ns.index("{") + 1 : self.ns.index("}")]
        self.history = History()
        self.workers = [
            Worker(f"w{n}", f"rwqc-{token}-w{n}", random.Random(config.seed * 1000 + n))
            for n in range(1, config.workers + 1)
        ]
        self.ids: list[Json] = []  # every id an add was invoked for, for bare-id completes
        self.ops = 0
        self.stop = threading.Event()
        self.adapter_errors: list[str] = []
        self._lock = threading.Lock()
        self._processes: list[AdapterProcess] = []
        self._staller = raw_client(env.data_url)
        self.retry = self.delay = False  # the profile mixes, decided once the adapter said hello
        self.flat_workers: frozenset[str] = frozenset()

    # -- sessions --------------------------------------------------------------------------
    def _open(self, worker: Worker, process: AdapterProcess | None = None) -> None:
        """Open the worker's session, in ``process`` or in a new adapter process."""
        if process is None:
            process = self.pool.start(SUBJECT)
            with self._lock:
                self._processes.append(process)
        args: dict[str, Any] = {"session": worker.name, "queue": self.ns, "client_name": worker.client_name}
        options = {"flat_in_flight": True} if worker.name in self.flat_workers else {}
        if self.config.declared_keys:
            options["declared_keys"] = True
        if options:
            args["options"] = options
        reply = process.request("open", args)
        if not reply.ok:
            raise AdapterFailure(f"open {worker.name} was refused: {reply.describe()}")
        worker.process, worker.held, worker.killed = process, [], False

    def call(self, worker: Worker, method: str, params: dict[str, Any]) -> tuple[str, Json]:
        """One logged operation: ``(ok | fail | info, result or error)``; a worker whose
        adapter failed restarts in a new process, with no leases."""
        self.history.log(worker.name, INVOKE, method, params)
        kind, value = self._call(worker, method, params)
        self.history.log(worker.name, kind, method, value)
        if worker.process is None:
            self._open(worker)
        return kind, value

    def _call(self, worker: Worker, method: str, params: dict[str, Any]) -> tuple[str, Json]:
        assert worker.process is not None
        wait_s = params.get("timeout_ms", 0) / 1000
        args = {"session": worker.name, "method": method, "params": params}
        try:
            reply = worker.process.request("call", args, timeout_s=self.pool.timeouts.request_s + wait_s)
        except AdapterFailure as exc:
            if not worker.killed:
                self.adapter_errors.append(f"{worker.name} {method}: {exc.kind}: {exc}")
            worker.process.kill()
            worker.process = None
            return INFO, {"adapter": exc.kind, "message": str(exc)}
        if reply.ok:
            problems = data.schema_errors("adapter-protocol", reply.value, f"/$defs/results/{method}")
            if not problems:
                return OK, reply.value
            self.adapter_errors.append(f"{worker.name} {method}: result breaks the protocol: {problems}")
            return INFO, reply.value
        if reply.kind != "domain":
            self.adapter_errors.append(f"{worker.name} {method}: {reply.describe()}")
        return (FAIL if reply.code in DEFINITE else INFO), reply.error

    # -- workers ---------------------------------------------------------------------------
    def _take(self) -> bool:
        with self._lock:
            self.ops += 1
            return self.ops <= self.config.max_ops and not self.stop.is_set()

    def _profiles(self) -> None:
        """Decide the profile mixes from the adapter's hello, and set the retry policy."""
        declared = set(self.pool.hellos[SUBJECT].profiles)
        wanted = declared if self.config.profiles is None else declared & set(self.config.profiles)
        self.retry, self.delay = "retry" in wanted, "delay" in wanted
        if "flat" in wanted:
            self.flat_workers = frozenset(worker.name for worker in self.workers[1::2])
        if self.retry:
            rng = random.Random(self.config.seed)
            rules = {
                "max_attempts": MAX_ATTEMPTS,
                "backoff": "fixed",
                "base_ms": rng.choice(BACKOFF_MS),
                "cap_ms": 0,
                "jitter_pct": 0,
                "dead_max_count": 0,
                "dead_max_age_ms": 0,
            }
            setup = Worker("setup", self.workers[0].client_name + "-setup", rng)
            self._open(setup, self.workers[0].process)
            kind, value = self.call(setup, "set_policy", {"policy": rules})
            if kind != OK:
                self.adapter_errors.append(f"set_policy was refused: {value}")
                self.retry = False

    def _delay(self, worker: Worker, params: dict[str, Any], share: float) -> dict[str, Any]:
        if self.delay and worker.rng.random() < share:
            params["delay_ms"] = worker.rng.choice(DELAY_MS)
        return params

    def _new_items(self, worker: Worker) -> list[Json]:
        items = []
        for _ in range(worker.rng.randint(1, 3)):
            worker.added += 1
            item_id = f"{worker.name}-{worker.added}"
            payload = item_id.encode() + b"|" + worker.rng.randbytes(worker.rng.randint(0, 3))
            items.append({"id": encode_bytes(item_id.encode()), "data": encode_bytes(payload)})
        with self._lock:
            self.ids += [item["id"] for item in items]
        return items

    def step(self, worker: Worker) -> None:
        """One operation, chosen by the worker's generator from what it holds."""
        rng = worker.rng
        choices = ["add"] * 3 + ["lease"] * 5 + ["light_clean"] * 2
        if worker.held:
            choices += ["complete"] * 6 + ["release", "renew"] * 2 + ["fail"] * (3 * self.retry)
        action = rng.choice(choices)
        if action == "add":
            items = self._new_items(worker)
            if len(items) == 1:
                self.call(worker, "add", self._delay(worker, items[0], 0.25))
            else:
                self.call(worker, "add_many", self._delay(worker, {"items": items}, 0.25))
        elif action == "fail":
            lease = worker.held.pop(rng.randrange(len(worker.held)))
            self.call(worker, "fail", {"lease": lease, "reason": "workload"})
        elif action == "lease":
            self._lease(worker)
        elif action == "complete":
            self._complete(worker)
        elif action == "release":
            lease = worker.held.pop(rng.randrange(len(worker.held)))
            self.call(worker, "release", self._delay(worker, {"lease": lease}, 0.5))
        elif action == "renew":
            kind, value = self.call(
                worker, "renew_many", {"leases": worker.held, "lease_ms": rng.choice(LEASE_MS)}
            )
            worker.held = (
                [lease for lease, kept in zip(worker.held, value, strict=True) if kept] if kind == OK else []
            )
        else:
            self.call(worker, "light_clean", {"chunk": rng.choice([1, 2, 100])})

    def _lease(self, worker: Worker) -> None:
        rng, lease_ms = worker.rng, worker.rng.choice(LEASE_MS)
        count = rng.choice([1, 1, 1, 2, 3])
        if count > 1:
            kind, value = self.call(worker, "lease_many", {"count": count, "lease_ms": lease_ms})
            worker.held += value if kind == OK else []
            return
        params: dict[str, Any] = {"lease_ms": lease_ms}
        if rng.random() < 0.2:
            params |= {"block": True, "timeout_ms": TICK_MS}
        kind, value = self.call(worker, "lease", params)
        if kind == OK and value is not None:
            worker.held.append(value)

    def _complete(self, worker: Worker) -> None:
        rng = worker.rng
        if rng.random() < 0.1:  # someone completes an item by id, whoever may hold it
            with self._lock:
                item_id = rng.choice(self.ids)
            self.call(worker, "complete", {"id": item_id})
            return
        chosen = [
            worker.held.pop(rng.randrange(len(worker.held)))
            for _ in range(min(len(worker.held), rng.choice([1, 1, 2])))
        ]
        require_lease = rng.random() < 0.5
        if rng.random() < 0.4:  # a worker's fast path: settle and take the next in one call
            params = {"items": [{"lease": lease} for lease in chosen], "count": rng.choice([1, 1, 2])}
            params |= {"lease_ms": rng.choice(LEASE_MS), "require_lease": require_lease}
            kind, value = self.call(worker, "complete_and_lease", params)
            worker.held += value["leases"] if kind == OK else []
        elif len(chosen) == 1:
            self.call(worker, "complete", {"lease": chosen[0], "require_lease": require_lease})
        else:
            items = [{"lease": lease} for lease in chosen]
            self.call(worker, "complete_many", {"items": items, "require_lease": require_lease})

    def _work(self, worker: Worker) -> None:
        try:
            if worker.process is None:
                self._open(worker)
            while self._take():
                self.step(worker)
        except AdapterFailure as exc:  # the worker could not restart its adapter
            self.adapter_errors.append(f"{worker.name} stopped: {exc}")

    # -- nemesis ---------------------------------------------------------------------------
    def _nemesis(self, rng: random.Random, done: threading.Event) -> None:
        """A fault every few operations (a clock tick at least every 100 ms, so that blocked
        leases return), until ``done``."""
        due, last = rng.randint(2, 8), time.monotonic()
        while not done.wait(0.002):
            if self.ops < due and time.monotonic() - last < 0.1:
                continue
            due, last = self.ops + rng.randint(2, 8), time.monotonic()
            fault = rng.choice(["tick"] * 3 + ["jump", "stall-kill", *FAULTS])
            if fault == "tick":
                self.history.advance(self.env, self.ns, TICK_MS, "nemesis")
            elif fault == "jump":
                self.history.advance(self.env, self.ns, JUMP_MS, "nemesis")
            else:
                self._fault(rng, fault)

    def _fault(self, rng: random.Random, fault: str) -> None:
        """Flush the scripts, kill a worker's connections or process (preferably one that holds
        leases) or every worker's connections behind a stall, logged as an invocation and its
        completion."""
        holding = [w for w in self.workers if w.held] or self.workers
        victim = rng.choice(holding)
        victims = self.workers if fault == "stall-kill" else [] if fault == "script-flush" else [victim]
        target = {"workers": [w.name for w in victims]}
        self.history.log("nemesis", INVOKE, fault, target)
        if fault == "script-flush":
            self.env.script_flush()
        elif fault == "kill-connections":
            self.env.kill_clients({victim.client_name})
        elif fault == "stall-kill":
            self._stall_kill({w.client_name for w in victims})
        elif (process := victim.process) is not None:
            victim.killed = True
            process.kill()
        self.history.log("nemesis", INFO, fault, target)

    def _stall_kill(self, names: set[str]) -> None:
        """Stall the server (``DEBUG SLEEP``) and queue a ``CLIENT KILL`` of the named connections
        behind the stall: a command one of them sends meanwhile often runs just before the
        kill, so its reply is lost although it took effect (RWQ-FAIL-001)."""
        ids = [entry["id"] for entry in self.env.clients() if entry.get("name") in names]
        stall = threading.Thread(target=self._staller.execute_command, args=("DEBUG", "SLEEP", STALL_S))
        stall.start()
        time.sleep(STALL_S / 4)  # let the stall begin: the kills queue up behind it
        for client_id in ids:
            with contextlib.suppress(RedisError):  # it may have gone away by itself
                self.env.client.execute_command("CLIENT", "KILL", "ID", client_id)
        stall.join()

    # -- the run ---------------------------------------------------------------------------
    def drain(self) -> list[str]:
        """Clock past every lease and due time, clean, lease and complete until empty, and read
        the dead set; the keys left."""
        drainer = Worker("drain", self.workers[0].client_name + "-drain", random.Random(0))
        self._open(drainer, next((w.process for w in self.workers if w.process and w.process.alive), None))
        self.history.advance(self.env, self.ns, JUMP_MS, "drain")
        self.call(drainer, "light_clean", {})
        for _ in range(1000):
            kind, leases = self.call(drainer, "lease_many", {"count": 100, "lease_ms": 60_000})
            if kind != OK or not leases:
                break
            self.call(drainer, "complete_many", {"items": [{"lease": lease} for lease in leases]})
        if self.retry:
            kind, dead = self.call(drainer, "dead_list", {"count": 1000})  # far more than max_ops adds
            for item in dead if kind == OK else []:
                self.call(drainer, "dead_get", {"id": item["id"]})
        return [key.decode("utf-8", "surrogateescape") for key in self.env.namespace_keys(self.ns)]

    def allowed_keys(self) -> list[str]:
        """The profile keys a drained queue legitimately keeps: the policy and the dead set (the
        attempt counts go with every completed or dead-lettered item, the delayed set when the
        drain leases every due item)."""
        return (
            [f"{self.ns}:{name}" for name in ("policy", "dead", "dead:data", "dead:info")]
            if self.retry
            else []
        )

    def run(self) -> list[Anomaly]:
        """Run, drain and check; the anomalies found."""
        try:
            self._open(self.workers[0])
            self._profiles()
            done = threading.Event()
            nemesis = threading.Thread(target=self._nemesis, args=(random.Random(self.config.seed), done))
            threads = [threading.Thread(target=self._work, args=(w,), name=w.name) for w in self.workers]
            for thread in [nemesis, *threads]:
                thread.start()
            deadline = time.monotonic() + self.config.wall_s
            for thread in threads:
                thread.join(max(deadline - time.monotonic(), 0.1))
            self.stop.set()
            for thread in threads:
                thread.join()
            done.set()
            nemesis.join()
            left = self.drain()
            return check(self.history.events, left, self.allowed_keys())
        finally:
            for process in self._processes:
                process.stop()
            self._staller.close()
            self.env.drop_namespace(self.ns)

    def write(self, directory: Path, anomalies: list[Anomaly]) -> Path:
        """``history.jsonl`` (one event per line) and ``anomalies.json`` under ``directory``."""
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "history.jsonl"
        with path.open("w", encoding="utf-8") as out:
            for event in self.history.events:
                out.write(json.dumps(event.to_json(), ensure_ascii=False) + "\n")
        summary = {
            "seed": self.config.seed,
            "events": len(self.history.events),
            "anomalies": [a.to_json() for a in anomalies],
        }
        (directory / "anomalies.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
        return path


def run_workload(
    env: RedisEnvironment, pool: AdapterPool, config: WorkloadConfig, out_dir: Path | None = None
) -> CaseRun:
    """Run the workload as a case: ``fail`` with a summary of the anomalies, if any."""
    started = time.monotonic()
    workload = Workload(env, pool, config)
    try:
        anomalies = workload.run()
    except AdapterFailure as exc:
        failure = Failure(None, None, exc.kind, f"the drain's adapter did not start: {exc}")
        return CaseRun(STATUS_BY_KIND[exc.kind], 0, failure)
    except RedisError as exc:
        failure = Failure(None, None, "redis", f"the runner's Redis command failed: {exc}")
        return CaseRun(STATUS_BY_KIND["redis"], 0, failure)
    anomalies += [Anomaly("adapter-error", "RWQ-ERR-001", message) for message in workload.adapter_errors]
    where = f"; history: {workload.write(out_dir / 'workload', anomalies)}" if out_dir else ""
    duration_ms = int((time.monotonic() - started) * 1000)
    if not anomalies:
        return CaseRun("pass", duration_ms, note=f"seed {config.seed}, {workload.ops} operations")
    kinds = sorted({a.kind for a in anomalies})
    message = f"{len(anomalies)} anomalies ({', '.join(kinds)}), seed {config.seed}: " + "; ".join(
        a.message for a in anomalies[:5]
    )
    return CaseRun("fail", duration_ms, Failure(None, None, "mismatch", message + where))
