"""The adapter processes of a run: one shared process per implementation, restarted when it
breaks, plus processes of their own for sessions that need one; and the interop permutations
that decide which implementation hosts each ``impl: any`` session."""

from __future__ import annotations

import dataclasses
import itertools
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from .adapter import AdapterFailure, AdapterProcess, HandshakeFailed, Hello, Observer, Timeouts
from .cases import Case
from .encoding import Json
from .proxy import FaultProxy

SUBJECT = "subject"
REFERENCE = "reference"
ANY = "any"
REFERENCE_ARGV = (sys.executable, "-m", "rwq.conformance.reference_adapter")
LABELS = {SUBJECT: "subject", REFERENCE: "ref"}
MAX_PARKED = 4
"""Own processes a pool keeps per implementation between cases (:meth:`AdapterPool.park`)."""
"""How a permutation names each implementation in a case id (``...@ref,subject``)."""

EventSink = Callable[..., None]
"""Called as ``sink(event_name, **fields)``."""


def hosting_impl(impl: str) -> str:
    """Which adapter hosts a session (an ``any`` session of a case never permuted: the subject)."""
    return REFERENCE if impl == REFERENCE else SUBJECT


def assignments(count: int) -> list[tuple[str, ...]]:
    """The implementations for ``count`` ``any`` sessions, in order: all subject, alternating
    subject/reference, and alternating reference/subject (duplicates dropped)."""
    candidates = (
        (SUBJECT,) * count,
        tuple(SUBJECT if i % 2 == 0 else REFERENCE for i in range(count)),
        tuple(REFERENCE if i % 2 == 0 else SUBJECT for i in range(count)),
    )
    return list(dict.fromkeys(candidates))


def permutations(case: Case) -> list[Case]:
    """``case`` once per assignment of its ``any`` sessions, each with the id suffix
    ``@<impl>,<impl>...`` (the ``any`` sessions in the case's order); a case without ``any``
    sessions as it is. An assignment that leaves no session in the subject is dropped. Each
    permutation keeps the case's id and aliases as aliases, so ``-k`` and known-failures entries
    that name the case match all of its permutations."""
    flexible = [name for name, spec in case.sessions.items() if spec.impl == ANY]
    if not flexible:
        return [case]
    permuted = []
    for assignment in assignments(len(flexible)):
        chosen = dict(zip(flexible, assignment, strict=True))
        sessions = {
            name: dataclasses.replace(spec, impl=chosen.get(name, spec.impl))
            for name, spec in case.sessions.items()
        }
        if all(spec.impl == REFERENCE for spec in sessions.values()):
            continue
        suffix = "@" + ",".join(LABELS[impl] for impl in assignment)
        aliases = (*(alias + suffix for alias in case.aliases), case.id, *case.aliases)
        permuted.append(dataclasses.replace(case, id=case.id + suffix, sessions=sessions, aliases=aliases))
    return permuted


def expand(cases: Iterable[Case]) -> list[Case]:
    """Every case, its ``any`` sessions expanded into permutations (:func:`permutations`)."""
    return [permuted for case in cases for permuted in permutations(case)]


class AdapterPool:
    """Starts, hands out, restarts and stops adapter processes; counts restarts for crash loops.

    A ``--jobs`` run has one pool per worker (its shared processes are the worker's own); the pools
    draw process labels from one ``labels`` counter so that each process's stderr log has its own
    name."""

    def __init__(
        self,
        subject_argv: Sequence[str],
        *,
        redis_url: str,
        cluster: bool = False,
        timeouts: Timeouts,
        log_dir: Path,
        emit: EventSink,
        labels: Iterator[int] | None = None,
    ) -> None:
        self.argvs = {SUBJECT: list(subject_argv), REFERENCE: list(REFERENCE_ARGV)}
        self.redis_url = redis_url
        self.cluster = cluster
        self.timeouts = timeouts
        self.log_dir = log_dir
        self.emit = emit
        self.restarts = 0
        self.observer: Observer | None = None
        self.hellos: dict[str, Hello] = {}
        self._shared: dict[str, AdapterProcess] = {}
        self._parked: dict[tuple[str, bool], list[tuple[AdapterProcess, FaultProxy | None]]] = {}
        self._labels = labels if labels is not None else itertools.count(1)
        self._stopping: list[threading.Thread] = []
        self.finished_sessions: set[str] = set()
        """Client names of the sessions of this pool's finished cases: their processes exit in the
        background (:meth:`retire`), so the next case's trace may see them close."""

    def _observe(self, label: str, direction: str, message: Json) -> None:
        if self.observer is not None:
            self.observer(label, direction, message)

    def start(self, impl: str, redis_url: str | None = None) -> AdapterProcess:
        """A new process of ``impl`` that has completed its handshake (HandshakeFailed if not),
        connected to ``redis_url`` (default: the run's Redis)."""
        label = f"{impl}-{next(self._labels)}"
        redis_url = redis_url or self.redis_url
        process = AdapterProcess(
            self.argvs[impl],
            label=label,
            env={
                "RWQ_CONFORMANCE": "1",
                "RWQ_REDIS_URL": redis_url,
                "RWQ_REDIS_CLUSTER": "1" if self.cluster else "",
                "RWQ_PROTOCOL": "1",
            },
            timeouts=self.timeouts,
            stderr_log=self.log_dir / f"{label}.stderr.log",
            observer=self._observe,
        )
        try:
            hello = process.handshake(redis_url, cluster=self.cluster)
            self._check_cluster(hello)
        except BaseException:
            process.kill()
            raise
        self.hellos.setdefault(impl, hello)
        return process

    def _check_cluster(self, hello: Hello) -> None:
        """On a cluster run, refuse an adapter whose hello does not declare cluster support."""
        if self.cluster and hello.raw.get("capabilities", {}).get("cluster") is not True:
            raise HandshakeFailed(
                "the run targets Redis Cluster, but the adapter does not declare cluster support "
                '(hello capabilities {"cluster": true})'
            )

    def shared(self, impl: str) -> AdapterProcess:
        """The shared process of ``impl``, started (or restarted after a failure) on demand."""
        process = self._shared.get(impl)
        if process is not None and process.alive:
            return process
        if process is not None:
            process.kill()
            del self._shared[impl]
            if not process.abandoned:  # the runner gave up on a blocked call: not a crash
                self.restarts += 1
            self.emit("adapter_restarted", impl=impl, previous=process.label, restarts=self.restarts)
        process = self.start(impl)
        self._shared[impl] = process
        return process

    def own(
        self, impl: str, upstream: tuple[str, int] | None = None
    ) -> tuple[AdapterProcess, FaultProxy | None]:
        """A process of ``impl`` for one case's ``own_process`` session, connected through a
        new fault proxy to ``upstream`` when given: one an earlier case parked (:meth:`park`),
        else a new one. Starting an adapter costs far more than a case's calls (0.3 s of CPU for
        the reference adapter, most of it importing redis-py)."""
        parked = self._parked.setdefault((impl, upstream is not None), [])
        while parked:
            process, proxy = parked.pop()
            if process.idle:
                return process, proxy
            self.retire(process)
            if proxy is not None:
                proxy.close()
        if upstream is None:
            return self.start(impl), None
        proxy = FaultProxy(upstream)
        try:
            return self.start(impl, proxy.url), proxy
        except BaseException:
            proxy.close()
            raise

    def park(self, impl: str, process: AdapterProcess, proxy: FaultProxy | None = None) -> bool:
        """Keep an own process its case is done with (and its proxy, disarmed) for a later
        case's own sessions, if it is idle and answers ``reset``; otherwise (killed, abandoned, a
        call in flight) retire it. Whether it was kept: a proxy not kept is the caller's to close."""
        parked = self._parked.setdefault((impl, proxy is not None), [])
        reusable = process.idle and len(parked) < MAX_PARKED
        if reusable:
            try:
                reusable = process.request("reset").ok
            except AdapterFailure:
                reusable = False
        if not reusable:
            self.retire(process)
            return False
        if proxy is not None:
            proxy.disarm()
            proxy.sever()
        parked.append((process, proxy))
        return True

    def retire(self, process: AdapterProcess) -> None:
        """Stop a process a case is done with, in the background: the next case need not wait for
        it to exit (:meth:`close` waits for them all)."""
        stopping = threading.Thread(target=process.stop, name=f"{process.label}-stop", daemon=True)
        stopping.start()
        self._stopping = [thread for thread in self._stopping if thread.is_alive()] + [stopping]

    def close(self) -> None:
        """Stop every shared process and wait for the retired ones to be gone."""
        for process in self._shared.values():
            process.stop()
        for process, proxy in itertools.chain(*self._parked.values()):
            process.stop()
            if proxy is not None:
                proxy.close()
        self._shared.clear()
        self._parked.clear()
        for thread in self._stopping:
            thread.join()
        self._stopping.clear()
