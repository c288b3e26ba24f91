"""A conformance run, end to end: Redis, the adapter under test, the cases, the reports, the
exit code.

Exit codes: 0 conforms for the claimed profiles; 1 non-conformant (an unexpected failure, an
xpass or a known-failures entry that matches nothing); 2 the adapter is broken (handshake
failed, crash loop); 3 usage or configuration error; 4 nothing ran.
"""

from __future__ import annotations

import itertools
import os
import secrets
import shlex
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from redis.exceptions import RedisError
from rich.console import Console

from .. import __version__
from ..console import EXIT_USAGE
from . import data, stateful, workload
from .adapter import PROTOCOL_VERSION, AdapterFailure, Hello, Timeouts
from .cases import Case, CaseFileError, load_cases, matches
from .environment import RedisEnvironment
from .execution import CaseRun, Failure, run_case
from .known_failures import KnownFailures, KnownFailuresError, apply_fail_entry
from .pool import SUBJECT, AdapterPool, expand, hosting_impl
from .redis_server import RedisUnavailable
from .report import (
    UNEXPECTED,
    EventLog,
    Terminal,
    case_record,
    junit_xml,
    markdown_summary,
    now,
    requirement_verdicts,
    summarise,
    write_report,
)

EXIT_CONFORMS = 0
EXIT_NONCONFORMANT = 1
EXIT_ADAPTER_BROKEN = 2  # 3 is EXIT_USAGE, the whole CLI's (rwq.console)
EXIT_NOTHING_RAN = 4
VERDICTS = {
    EXIT_CONFORMS: "conforms",
    EXIT_NONCONFORMANT: "non-conformant",
    EXIT_ADAPTER_BROKEN: "adapter-broken",
    EXIT_USAGE: "usage-error",
    EXIT_NOTHING_RAN: "nothing-ran",
}
MAX_CONSECUTIVE_CRASHES = 3
CRASH_KINDS = frozenset({"crash", "handshake", "timeout"})
"""Failure kinds that say the adapter itself is broken (for the crash-loop rule)."""
MAX_RESTARTS = 10
STDERR_TAIL_LINES = 20
"""Lines of the adapter's stderr shown when its handshake fails."""


class UsageError(Exception):
    """The run cannot start as asked (exit code 3)."""


@dataclass
class RunConfig:
    """What ``rwq conformance`` was asked to do."""

    adapter: str
    out: Path
    profiles: tuple[str, ...] = ()
    redis_url: str | None = None
    cluster: bool = False
    known_failures: Path | None = None
    pattern: str | None = None
    cases_dir: Path | None = None
    timeout_multiplier: float = 1.0
    property_examples: int = 0
    workload: bool = False
    seed: int | None = None
    """Seed of every random choice (property programs, workload schedule, fault timing); None: a new one."""
    junit: Path | None = None
    """Also write the JUnit XML here (it is always written to ``out/junit.xml``)."""
    declared_keys: bool = False
    """Open every subject session with option ``declared_keys`` (profile declared-keys, SPEC 20),
    and check that each script call passes every key its script touches (RWQ-DECL-001)."""
    jobs: int | None = None
    """Cases run at once (:func:`default_jobs` when None); 1 runs them one after another."""
    fail_fast: bool = False
    """Stop after the first unexpected failure: cases not started by then are ``not-run``."""
    console: Console = field(default_factory=Console)


def default_jobs() -> int:
    """The CPU count: the run is mostly CPU (the runner, the adapters and Redis share the cores),
    so more workers than cores only add contention."""
    return max(os.cpu_count() or 1, 1)


GLOBAL_COMMANDS = frozenset(
    {
        "CONFIG",
        "DBSIZE",
        "DEBUG",
        "FLUSHALL",
        "FLUSHDB",
        "INFO",
        "KEYS",
        "SCRIPT",
        "SWAPDB",
        "CLIENT",
        "MEMORY",
    }
)
"""Raw commands that read or change the whole server rather than keys of one namespace."""
SERVER_FAULTS = frozenset({"script-flush", "restart"})
"""Faults that act on the whole server (both flush its script cache)."""


def needs_server_alone(case: Case, frozen: bool) -> str | None:
    """Why ``case`` cannot share its Redis with other cases running at the same time, or None:
    it moves the server's frozen clock, flushes the script cache, or runs a raw command that
    reads or changes the whole server (``CONFIG``, ``INFO``, ``DBSIZE``, ...). The property test
    and the workload do all of that."""
    if case is stateful.CASE or case is workload.CASE:
        return "it flushes scripts, kills connections and moves time"
    for position, step in enumerate(case.steps, 1):
        if ("advance_time_ms" in step or "rewind_time_ms" in step) and frozen:
            return f"step {position} moves the frozen clock of the whole server"
        if step.get("fault") in SERVER_FAULTS:
            return f"step {position} ({step['fault']}) flushes the server's script cache"
        command = str(step["redis"][0]).upper() if step.get("redis") else ""
        if command in GLOBAL_COMMANDS:
            return f"step {position} runs {command}, which reads or changes the whole server"
    return None


@dataclass
class Worker:
    """One lane of a run: the Redis its cases use and its own adapter processes."""

    env: RedisEnvironment
    pool: AdapterPool


def scripts_problems(hello: Hello) -> list[str]:
    """How the adapter's embedded scripts differ from the canonical manifest."""
    problems = []
    for name, sha in sorted(data.canonical_scripts().items()):
        theirs = hello.scripts.get(name)
        if theirs is None:
            problems.append(f"{name}: missing (canonical {sha})")
        elif theirs != sha:
            problems.append(f"{name}: {theirs} is not the canonical {sha}")
    return problems


DECLARED_KEYS = "declared-keys"
UNDECLARED_KEYS = "undeclared-keys"
"""The capability of a run without --declared-keys, which a case that counts on one script call
doing what a cold window splits in two (a lost reply, a composite's key check) needs."""


def with_declared_keys(case: Case) -> Case:
    """``case`` with option ``declared_keys`` on each session the subject hosts."""
    sessions = {
        name: replace(spec, options={**(spec.options or {}), "declared_keys": True})
        if hosting_impl(spec.impl) == SUBJECT
        else spec
        for name, spec in case.sessions.items()
    }
    return replace(case, sessions=sessions)


def applicability(
    case: Case, claimed: set[str], capabilities: frozenset[str], clock_note: str | None = None
) -> str | None:
    """Why ``case`` does not apply to this run, or None (``clock_note``: why the clock is not frozen)."""
    unclaimed = sorted(set(case.profiles) - claimed)
    if unclaimed:
        return f"profile(s) not claimed: {', '.join(unclaimed)}"
    missing = sorted(set(case.needs) - capabilities)
    if missing:
        why = f" ({clock_note})" if clock_note and "frozen-clock" in missing else ""
        return f"environment lacks: {', '.join(missing)}{why}"
    if "cluster" in capabilities and any(spec.proxied for spec in case.sessions.values()):
        return "the fault proxy stands in front of one server; a cluster client connects to every node"
    return None


def shortest_duration_ms(case: Case) -> int | None:
    """The shortest positive duration (an ``*_ms`` argument: a lease, a timeout, a delay) the case
    gives a call or a session, or None."""
    found: list[int] = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and key.endswith("_ms") and type(item) is int and item > 0:
                    found.append(item)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk([step.get("args") for step in case.steps if "call" in step])
    walk([spec.options for spec in case.sessions.values()])
    return min(found, default=None)


def inconclusive(case: Case, run: CaseRun, frozen: bool) -> str | None:
    """Why a failure of ``case`` proves nothing, or None: on a running clock, a case that took
    longer than its shortest lease or timeout may have watched it expire for real."""
    if frozen or run.failure is None or run.failure.kind != "mismatch":
        return None
    shortest = shortest_duration_ms(case)
    if shortest is None or run.duration_ms < shortest:
        return None
    return (
        f"environment lacks: frozen-clock (inconclusive: the case took {run.duration_ms} ms on a running "
        f"clock, longer than its shortest duration, {shortest} ms)"
    )


REFUSALS = ("no permissions", "unknown command", "unknown subcommand", "not allowed", "disabled")
"""How a server says it does not let the runner run a command (ACL, renamed or disabled commands)."""


def refused(run: CaseRun, managed: bool) -> str | None:
    """Why a case that failed on an external Redis proves nothing, or None: the server refused one
    of the runner's own commands (``CLIENT LIST`` or ``CLIENT KILL`` under an ACL, say)."""
    failure = run.failure
    if managed or failure is None or failure.kind != "redis":
        return None
    if not any(marker in failure.message.lower() for marker in REFUSALS):
        return None
    return f"environment lacks: a command the runner needs ({failure.message})"


def tail_of_logs(paths: list[Path], lines: int) -> list[str]:
    """The last ``lines`` lines of the given log files, in order."""
    text: list[str] = []
    for path in paths:
        text += path.read_text(encoding="utf-8", errors="replace").splitlines()
    return text[-lines:]


def drop_empty_logs(log_dir: Path) -> None:
    """Delete the stderr logs of adapters that wrote nothing, and the directory if none is left."""
    for path in log_dir.glob("*.stderr.log"):
        if path.stat().st_size == 0:
            path.unlink()
    if log_dir.is_dir() and not any(log_dir.iterdir()):
        log_dir.rmdir()


class Run:
    """One conformance run; :meth:`execute` returns the exit code."""

    def __init__(self, config: RunConfig) -> None:
        self.config = config
        self.terminal = Terminal(config.console)
        self.started_at = now()
        self.started = time.monotonic()
        self.records: list[dict[str, Any]] = []
        self.aborted: str | None = None
        self.stopped: str | None = None
        """Set by ``--fail-fast`` at the first unexpected failure."""
        self.hello: Hello | None = None
        self.claimed: list[str] = []
        self.scripts: list[str] | None = None
        self.known = KnownFailures()
        self.corpus: list[Case] = []
        self.environment: dict[str, Any] = {}
        self.seed = config.seed if config.seed is not None else secrets.randbelow(2**31)
        self.aborted_stderr: list[str] = []

    # -- set-up --------------------------------------------------------------------------
    def _prepare(self) -> tuple[list[str], list[Case]]:
        argv = shlex.split(self.config.adapter)
        if not argv:
            raise UsageError("--adapter is empty")
        if self.config.timeout_multiplier <= 0:
            raise UsageError("--timeout-multiplier must be positive")
        try:
            self.corpus = expand(load_cases(self.config.cases_dir or data.cases_dir()))
            self.corpus += [stateful.CASE] * (self.config.property_examples > 0)
            self.corpus += [workload.CASE] * self.config.workload
        except CaseFileError as exc:
            raise UsageError(str(exc)) from exc
        if self.config.known_failures is not None:
            try:
                self.known = KnownFailures.load(self.config.known_failures)
            except KnownFailuresError as exc:
                raise UsageError(f"invalid known-failures file: {exc}") from exc
        selected = [
            case for case in self.corpus if not self.config.pattern or matches(case, self.config.pattern)
        ]
        if self.config.declared_keys:  # property/ and workload/ declare where they run
            generated = (stateful.CASE, workload.CASE)
            selected = [
                case if any(case is g for g in generated) else with_declared_keys(case) for case in selected
            ]
        if not selected:
            raise UsageError(f"no case matches -k {self.config.pattern!r}")
        return argv, selected

    def execute(self) -> int:
        try:
            argv, selected = self._prepare()
        except UsageError as exc:
            self.terminal.message(f"usage error: {exc}", "bold red")
            return EXIT_USAGE
        self.config.out.mkdir(parents=True, exist_ok=True)
        self.terminal.seed(self.seed)
        with EventLog(self.config.out / "events.jsonl") as events:
            jobs = min(self.config.jobs or default_jobs(), len(selected))
            try:
                envs = self._environments(jobs)
            except (RedisError, RedisUnavailable, OSError, ValueError) as exc:
                self.terminal.message(f"usage error: cannot use Redis: {exc}", "bold red")
                return EXIT_USAGE
            env = envs[0]
            self.environment = {**env.describe(), "jobs": jobs}
            events.emit(
                "run_started",
                suite={"version": __version__, "protocol": PROTOCOL_VERSION},
                argv=sys.argv,
                adapter=self.config.adapter,
                environment=self.environment,
                cases=len(selected),
                seed=self.seed,
            )
            log_dir = self.config.out / "adapters"
            log_dir.mkdir(exist_ok=True)
            labels = itertools.count(1)
            workers = [
                Worker(
                    each,
                    AdapterPool(
                        argv,
                        redis_url=each.url,
                        cluster=each.cluster,
                        timeouts=Timeouts().scaled(self.config.timeout_multiplier),
                        log_dir=log_dir,
                        emit=events.emit,
                        labels=labels,
                    ),
                )
                for each in envs
            ]
            try:
                code = self._run(selected, workers, events)
            finally:
                for worker in workers:
                    worker.pool.close()
                    worker.env.close()
            if self.aborted and self.hello is None:
                self.aborted_stderr = tail_of_logs(
                    sorted(log_dir.glob(f"{SUBJECT}-*.stderr.log")), STDERR_TAIL_LINES
                )
            drop_empty_logs(log_dir)
            report = self._report(code)
            events.emit("run_finished", summary=report["summary"], verdict=report["verdict"], exit_code=code)
        self._write(report)
        self.terminal.final(report)
        return code

    def _environments(self, jobs: int) -> list[RedisEnvironment]:
        """One environment per worker. The runner's own servers (one per worker, started at
        once) keep every case alone on its server: its frozen clock, its script cache, its
        MONITOR trace. An external Redis is one server the workers share."""
        if self.config.redis_url:
            url, cluster = self.config.redis_url, self.config.cluster
            return [RedisEnvironment.external(url, cluster=cluster) for _ in range(jobs)]
        start = RedisEnvironment.managed_cluster if self.config.cluster else RedisEnvironment.managed
        with ThreadPoolExecutor(jobs) as executor:
            futures = [executor.submit(start) for _ in range(jobs)]
        envs = [future.result() for future in futures if future.exception() is None]
        if len(envs) < jobs:
            for env in envs:
                env.close()
            raise next(exc for future in futures if (exc := future.exception()) is not None)
        return envs

    def _write(self, report: dict[str, Any]) -> None:
        """report.json, junit.xml (and ``--junit``), summary.md (appended to ``$GITHUB_STEP_SUMMARY``)."""
        out = self.config.out
        write_report(out / "report.json", report)
        junit = junit_xml(report)
        for path in {out / "junit.xml", *([self.config.junit] if self.config.junit else [])}:
            path.write_text(junit, encoding="utf-8")
        summary = markdown_summary(report)
        (out / "summary.md").write_text(summary, encoding="utf-8")
        step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if step_summary:
            with open(step_summary, "a", encoding="utf-8") as handle:
                handle.write(summary + "\n")

    def _run(self, selected: list[Case], workers: list[Worker], events: EventLog) -> int:
        pool = workers[0].pool
        try:
            pool.shared(SUBJECT)
        except AdapterFailure as exc:
            self.aborted = f"the adapter failed its handshake: {exc}"
            events.emit("adapter_broken", reason=self.aborted)
            return EXIT_ADAPTER_BROKEN
        self.hello = pool.hellos[SUBJECT]
        events.emit("adapter_ready", hello=self.hello.raw)
        undeclared = sorted(set(self.config.profiles) - set(self.hello.profiles))
        if undeclared:
            self.aborted = f"profile(s) claimed but not declared by the adapter: {', '.join(undeclared)}"
            self.terminal.message(f"usage error: {self.aborted}", "bold red")
            return EXIT_USAGE
        self.claimed = list(self.config.profiles or self.hello.profiles)
        if self.config.declared_keys and DECLARED_KEYS not in self.hello.profiles:
            self.aborted = f"--declared-keys needs an adapter that declares profile {DECLARED_KEYS}"
            self.terminal.message(f"usage error: {self.aborted}", "bold red")
            return EXIT_USAGE
        if self.config.declared_keys and DECLARED_KEYS not in self.claimed:
            self.claimed.append(DECLARED_KEYS)
        self.scripts = scripts_problems(self.hello)
        self.terminal.header(self.hello.implementation, self.claimed, self.environment)
        if self.scripts:
            self.terminal.message("embedded scripts differ from the canonical RWQ/1 scripts:", "bold red")
            for problem in self.scripts:
                self.terminal.message(f"  {problem}", "red")
        Schedule(self, selected, workers, events).run()
        return self._exit_code()

    def finished(self, record: dict[str, Any], workers: list[Worker], events: EventLog) -> None:
        """Report one case, in case order (:class:`Schedule` holds back cases that finish early)."""
        self.records.append(record)
        events.emit("case_finished", case=record)
        self.terminal.case(record)
        if not self.aborted:
            self._check_crash_loop(sum(worker.pool.restarts for worker in workers))

    def stop_reason(self) -> str | None:
        """Why cases that have not started are not to run: an aborted run, or ``--fail-fast``."""
        return self.aborted or self.stopped

    def run_one(self, case: Case, env: RedisEnvironment, pool: AdapterPool) -> dict[str, Any]:
        if self.stop_reason():
            return case_record(case, "not-run", note=self.stop_reason())
        capabilities = env.capabilities - {UNDECLARED_KEYS} if self.config.declared_keys else env.capabilities
        reason = applicability(case, set(self.claimed), capabilities, env.clock_note)
        if reason:
            return case_record(case, "not-applicable", note=reason)
        skip = self.known.find("skip", case)
        if skip:
            return case_record(case, "skip", known=skip, note=f"known-failures skip: {skip.reason}")
        if self.scripts:
            message = "the adapter's embedded scripts are not the canonical RWQ/1 scripts: " + "; ".join(
                self.scripts
            )
            run = CaseRun("fail", 0, Failure(None, None, "scripts", message))
        elif case is stateful.CASE:
            run = stateful.run_property(
                env,
                pool,
                examples=self.config.property_examples,
                out_dir=self.config.out,
                seed_value=self.seed,
                case=with_declared_keys(case) if self.config.declared_keys else case,
            )
        elif case is workload.CASE:
            # The retry/delay mix runs only for claimed profiles; their verdicts come from
            # their own cases, so the workload cites core requirements only.
            config = workload.WorkloadConfig(
                profiles=tuple(self.claimed), seed=self.seed, declared_keys=self.config.declared_keys
            )
            run = workload.run_workload(env, pool, config, self.config.out)
        else:
            run = run_case(case, env, pool)
        doubt = refused(run, env.is_managed) or (
            inconclusive(case, run, env.frozen) if case not in (stateful.CASE, workload.CASE) else None
        )
        if doubt:
            return case_record(case, "not-applicable", run=run, note=doubt)
        entry = self.known.find("fail", case)
        status = apply_fail_entry(entry, run.status, run.failure.message if run.failure else None)
        if case.should and status == "fail":
            status = "warn"  # a SHOULD missed: reported, not gating (conformance/README.md)
        note = "listed in [[fail]] of the known-failures file, but passed" if status == "xpass" else run.note
        return case_record(case, status, run=run, known=entry, note=note)

    def _check_crash_loop(self, restarts: int) -> None:
        """Abort (the remaining cases become not-run) when the adapter keeps dying. A blocked call
        that did not return after its release (failure kind ``blocked``) is the case's failure,
        not a broken adapter: it does not count."""
        recent = [
            (record.get("failure") or {}).get("kind") for record in self.records[-MAX_CONSECUTIVE_CRASHES:]
        ]
        if len(recent) == MAX_CONSECUTIVE_CRASHES and all(k in CRASH_KINDS for k in recent):
            self.aborted = f"{MAX_CONSECUTIVE_CRASHES} cases in a row crashed or timed out the adapter"
        elif restarts >= MAX_RESTARTS:
            self.aborted = f"the adapter was restarted {restarts} times"

    def _exit_code(self) -> int:
        if self.aborted:
            return EXIT_ADAPTER_BROKEN
        statuses = {record["status"] for record in self.records}
        if not statuses & {"pass", "warn", "fail", "error", "timeout", "crash", "xfail", "xpass"}:
            return EXIT_NOTHING_RAN
        if statuses & UNEXPECTED or self.known.unmatched(self.corpus):
            return EXIT_NONCONFORMANT
        return EXIT_CONFORMS

    # -- report --------------------------------------------------------------------------
    def _report(self, code: int) -> dict[str, Any]:
        hello = self.hello
        return {
            "report_format": 1,
            "suite": {"name": "rwq", "version": __version__, "protocol": PROTOCOL_VERSION},
            "started_at": self.started_at,
            "duration_ms": int((time.monotonic() - self.started) * 1000),
            "argv": sys.argv,
            "adapter": {"command": self.config.adapter, "hello": hello.raw if hello else None},
            "implementation": hello.implementation if hello else None,
            "claimed_profiles": self.claimed,
            "environment": self.environment,
            "scripts_check": None
            if self.scripts is None
            else {"ok": not self.scripts, "problems": self.scripts},
            "verdict": VERDICTS[code],
            "exit_code": code,
            "seed": self.seed,
            "declared_keys": self.config.declared_keys,
            "aborted": self.aborted,
            "stopped": self.stopped,
            "aborted_stderr": self.aborted_stderr,
            "summary": summarise(self.records),
            "cases": self.records,
            "requirements": requirement_verdicts(self.records),
            "known_failures": {
                "file": self.known.path,
                "entries": [entry.to_json() for entry in self.known.entries],
                "unmatched": [entry.to_json() for entry in self.known.unmatched(self.corpus)],
            },
        }


class Schedule:
    """Hands the selected cases to the workers in order and reports them in order.

    Each worker takes the next case when it is free. On a server the workers share (an external
    Redis), a case that must have the server to itself (:func:`needs_server_alone`) waits until
    the running cases are done, and no other case starts until it is; with the runner's own
    servers every worker has a server of its own. A case that finishes before an earlier one is
    held back, so the terminal, ``events.jsonl`` and the report keep the case order."""

    def __init__(self, run: Run, cases: list[Case], workers: list[Worker], events: EventLog) -> None:
        self.run_ = run
        self.cases = cases
        self.workers = workers
        self.events = events
        self.shared_server = not workers[0].env.is_managed and len(workers) > 1
        self.frozen = workers[0].env.frozen
        self._lock = threading.Condition()
        self._next = 0
        self._running = 0
        self._alone = False
        self._done: dict[int, dict[str, Any]] = {}
        self._reported = 0

    def run(self) -> None:
        if len(self.workers) == 1:
            self._work(self.workers[0])
            return
        threads = [
            threading.Thread(target=self._work, args=(worker,), name=f"worker-{n}", daemon=True)
            for n, worker in enumerate(self.workers, 1)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def _take(self) -> tuple[int, Case, bool] | None:
        with self._lock:
            while self._next < len(self.cases):
                case = self.cases[self._next]
                alone = self.shared_server and needs_server_alone(case, self.frozen) is not None
                if self._alone or (alone and self._running):
                    self._lock.wait()
                    continue
                index, self._next = self._next, self._next + 1
                self._running += 1
                self._alone = alone
                return index, case, alone
            return None

    def _work(self, worker: Worker) -> None:
        while (taken := self._take()) is not None:
            index, case, alone = taken
            try:
                record = self.run_.run_one(case, worker.env, worker.pool)
            except Exception as exc:  # a bug of the runner: reported, and the other workers go on
                record = case_record(case, "error", note=f"the runner failed: {type(exc).__name__}: {exc}")
            with self._lock:
                self._running -= 1
                self._alone = self._alone and not alone
                if self.run_.config.fail_fast and record["status"] in UNEXPECTED and not self.run_.stopped:
                    self.run_.stopped = (
                        f"--fail-fast: stopped after the unexpected {record['status']} of {case.id}"
                    )
                self._done[index] = record
                while self._reported in self._done:
                    self.run_.finished(self._done.pop(self._reported), self.workers, self.events)
                    self._reported += 1
                self._lock.notify_all()


def run(config: RunConfig) -> int:
    """Run the suite as configured; returns the exit code."""
    return Run(config).execute()
