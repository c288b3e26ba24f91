"""Stateful property tests: a hypothesis state machine drives adapter sessions against the model.

Each action the machine draws becomes ordinary case steps (``call``, ``redis``, ``advance_time_ms``,
``fault``) whose ``expect`` holds the result :class:`~rwq.conformance.model.QueueModel`
predicts, run by the runner's own step verbs on sessions of the adapter under test.
After every step a ``check`` step compares the logical state and the raw keys in Redis with the
model. A failing program is shrunk (for a bounded time) and then written out as a case file
(``regressions/pbt-*``) that any port replays with ``rwq conformance --cases DIR``.

The machine needs the frozen clock: it compares lease TTLs exactly, and time moves only through
``advance_time_ms``. Lease times and clock steps are chosen so that no lease ever ends within
100 ms of a moment the program looks at.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import hypothesis.strategies as st
from hypothesis import HealthCheck, Phase, Verbosity, reject, seed, settings
from hypothesis.stateful import RuleBasedStateMachine, get_state_machine_test, initialize, invariant, rule
from redis.exceptions import RedisError

from .adapter import AdapterFailure
from .cases import Case, CaseFileError, SessionSpec, load_cases
from .encoding import Json, encode_bytes
from .environment import RedisEnvironment
from .execution import STATUS_BY_KIND, VERBS, CaseContext, CaseRun, Failure, StepFailure, run_case, verb_of
from .matching import TemplateError
from .model import DONE, LEASE_LOST, QueueModel
from .pool import AdapterPool

REQUIREMENTS = (
    "RWQ-KEYS-001",
    "RWQ-KEYS-002",
    "RWQ-KEYS-007",
    "RWQ-ADD-001",
    "RWQ-ADD-002",
    "RWQ-ADD-004",
    "RWQ-ADD-005",
    "RWQ-SCRIPT-002",
    "RWQ-SCRIPT-003",
    "RWQ-LEASE-001",
    "RWQ-LEASE-002",
    "RWQ-LEASE-003",
    "RWQ-LEASE-004",
    "RWQ-LEASE-005",
    "RWQ-LEASE-006",
    "RWQ-RENEW-001",
    "RWQ-RENEW-002",
    "RWQ-RENEW-003",
    "RWQ-COMPLETE-001",
    "RWQ-COMPLETE-002",
    "RWQ-COMPLETE-003",
    "RWQ-COMPLETE-004",
    "RWQ-COMPLETE-005",
    "RWQ-RELEASE-001",
    "RWQ-RELEASE-002",
    "RWQ-RELEASE-003",
    "RWQ-COUNT-001",
    "RWQ-CLEAN-001",
    "RWQ-CLEAN-002",
    "RWQ-CLEAN-003",
    "RWQ-CLEAN-004",
    "RWQ-DEEP-001",
    "RWQ-DEEP-003",
    "RWQ-DELIVERY-001",
    "RWQ-DELIVERY-002",
    "RWQ-DELIVERY-003",
    "RWQ-GHOST-001",
    "RWQ-GHOST-002",
    "RWQ-TIME-002",
    "RWQ-COMPAT-002",
)
SESSIONS = {name: SessionSpec(name) for name in ("p", "w1", "w2")}
CASE = Case(
    id="property/core-model",
    title="random programs of core operations keep Redis equal to the executable model",
    group="property",
    source="(generated) rwq.conformance.stateful",
    requirements=REQUIREMENTS,
    profiles=("core",),
    needs=("frozen-clock", "managed-redis"),
    sessions=SESSIONS,
    steps=(),
)
MAX_STEPS = 30
T = TypeVar("T")
REGRESSIONS = "regressions"

ALPHABET = ("a", "b", "c", "é")
IDS = st.sampled_from(ALPHABET)
PAIRS = st.lists(st.tuples(IDS, st.binary(max_size=3)), min_size=1, max_size=4)
LEASE_MS = st.sampled_from([1000, 3000])
ADVANCE_MS = (700, 2500, 10_000)  # sums never land within 100 ms of a lease's end
WORKERS = st.sampled_from(["w1", "w2"])
NOT_UTF8 = {"base64": "/w=="}  # the single byte 0xff
ACTIONS = {  # action -> weight; the first ones are what failing programs shrink towards
    "counts": 1,
    "add": 5,
    "lease": 6,
    "complete": 5,
    "complete_and_lease": 3,
    "release": 2,
    "renew": 2,
    "advance": 2,
    "light_clean": 3,
    "deep_clean": 1,
    "add_invalid": 1,
    "fault": 1,
    "foreign": 3,
}
NEEDS_LEASES = {"complete", "complete_and_lease", "release", "renew"}


def _some(data: st.DataObject, strategy: st.SearchStrategy[T]) -> list[T]:
    """One to three draws from ``strategy``, most often one (a single call rather than a batch)."""
    return [data.draw(strategy) for _ in range(data.draw(st.sampled_from([1, 1, 2, 3])))]


def _b(item_id: str) -> Json:
    return encode_bytes(item_id.encode("utf-8"))


def _pairs(pairs: list[tuple[str, bytes]]) -> list[Json]:
    return [{"id": _b(item_id), "data": encode_bytes(data)} for item_id, data in pairs]


@dataclass(frozen=True)
class LeaseRef:
    """A lease the program was granted: the case variable holding the adapter's lease object,
    the item id, and the model's token (the name of the lease call)."""

    var: str
    id: str
    token: str


@dataclass(frozen=True)
class Counterexample:
    """A failing program, how it failed, and what the adapters said meanwhile."""

    program: list[dict[str, Any]]
    failure: Failure
    stderr: dict[str, list[str]]
    transcript: list[dict[str, Any]]


@dataclass
class Exploration:
    """One property run: where its machines run, and the smallest failing program so far.

    Shrinking stops ``shrink_s`` after the first failure (at once for a crashed, silent or
    misbehaving adapter): later programs are rejected, so hypothesis winds down quickly.
    """

    env: RedisEnvironment
    pool: AdapterPool
    shrink_s: float
    case: Case = CASE
    """What the machines run as: :data:`CASE`, or it with every session's options changed."""
    best: Counterexample | None = None
    shrink_until: float | None = None
    programs: int = 0
    steps: int = 0
    digest: Any = field(default_factory=hashlib.sha256)
    """Of every program run, in order: the same seed gives the same digest (a replay check)."""

    def ran(self, program: list[dict[str, Any]], ns: str) -> None:
        self.programs += 1
        self.steps += len(program)
        self.digest.update(json.dumps(program, sort_keys=True).replace(ns, "${ns}").encode() + b"\n")

    def describe(self) -> str:
        return f"{self.programs} programs, {self.steps} steps, digest {self.digest.hexdigest()[:12]}"

    def expired(self) -> bool:
        return self.shrink_until is not None and time.monotonic() > self.shrink_until

    def failed(self, program: list[dict[str, Any]], failure: Failure, ctx: CaseContext) -> None:
        """Keep ``program`` if it is the first failure, or a shorter one of the same kind."""
        if self.best is None:
            budget = self.shrink_s if failure.kind == "mismatch" else 0
            self.shrink_until = time.monotonic() + budget
        elif failure.kind != self.best.failure.kind or len(program) >= len(self.best.program):
            return
        self.best = Counterexample(list(program), failure, ctx.stderr(), list(ctx.transcript))


class CoreMachine(RuleBasedStateMachine):
    """Sessions ``p`` (producer, cleaner) and ``w1``, ``w2`` (workers) of the adapter under test,
    in a fresh namespace per example, against one :class:`QueueModel`.

    One rule draws a weighted action and its arguments, so that every program mixes every kind
    of step (hypothesis' per-rule swarm testing would leave most short runs with a single kind).
    """

    def __init__(self, exploration: Exploration) -> None:
        super().__init__()
        if exploration.expired():
            reject()
        self.exploration = exploration
        self.model = QueueModel()
        self.granted: list[LeaseRef] = []  # every lease ever granted, stale ones included
        self.calls = 0
        self.program: list[dict[str, Any]] = []
        self.ctx = CaseContext(exploration.case, exploration.env, exploration.pool)
        exploration.pool.observer = self.ctx.record
        try:
            self.guarded(self.ctx.open_all, None)
        except BaseException:
            self.teardown()  # hypothesis tears down only machines that were built
            raise

    def teardown(self) -> None:
        self.exploration.ran(self.program, self.ctx.ns)
        self.ctx.pool.observer = None
        self.ctx.close()

    def guarded(self, action: Callable[[], None], verb: str | None) -> None:
        """Run ``action``; a failure is reported to the exploration, then raised on."""
        try:
            action()
        except (StepFailure, AdapterFailure, TemplateError, RedisError) as exc:
            failure = Failure(len(self.program) if verb else None, verb, *_kind_and_message(exc))
            self.exploration.failed(self.program, failure, self.ctx)
            raise

    def run(self, step: dict[str, Any]) -> None:
        """Record ``step`` in the program and execute it like a case step."""
        self.program.append(step)
        verb = verb_of(step)
        self.guarded(lambda: VERBS[verb](self.ctx, step), verb)

    def call(self, session: str, method: str, args: dict[str, Any], expect: Json, **extra: Any) -> None:
        step: dict[str, Any] = {"call": method, "session": session}
        if args:
            step["args"] = args
        self.run({**step, "expect": expect, **extra})

    @initialize(pairs=PAIRS)
    def start(self, pairs: list[tuple[str, bytes]]) -> None:
        self.add(pairs)

    @rule(data=st.data())
    def step(self, data: st.DataObject) -> None:
        actions = [a for a in ACTIONS for _ in range(ACTIONS[a]) if self.granted or a not in NEEDS_LEASES]
        action = data.draw(st.sampled_from(actions), label="action")
        getattr(self, f"_{action}")(data)

    def _leases(self) -> st.SearchStrategy[LeaseRef]:
        """Leases granted so far, the latest (most likely still held) first."""
        return st.sampled_from(self.granted[::-1])

    def _ids(self, existing: bool) -> st.SearchStrategy[str]:
        """Ids, with a bias towards those whose item exists (``existing``) or does not."""
        biased = [item_id for item_id in ALPHABET if (item_id in self.model.items) == existing]
        return st.one_of(st.sampled_from(biased), IDS) if biased else IDS

    # -- producers -------------------------------------------------------------------------
    def add(self, pairs: list[tuple[str, bytes]]) -> None:
        added = self.model.add_many(pairs)
        if len(pairs) == 1:
            self.call("p", "add", _pairs(pairs)[0], {"result": added[0]})
        else:
            self.call("p", "add_many", {"items": _pairs(pairs)}, {"result": added})

    def _add(self, data: st.DataObject) -> None:
        self.add(data.draw(PAIRS))

    def _add_invalid(self, data: st.DataObject) -> None:
        """A batch with one id that is not UTF-8 is refused as a whole and writes nothing."""
        items = _pairs(data.draw(PAIRS))
        items.insert(data.draw(st.integers(0, len(items))), {"id": NOT_UTF8, "data": {"utf8": "x"}})
        self.call("p", "add_many", {"items": items}, {"error": "INVALID_ARGUMENT"})

    # -- workers ---------------------------------------------------------------------------
    def _lease(self, data: st.DataObject) -> None:
        """``lease`` (blocking only when an item will be granted at once) or ``lease_many``."""
        worker, count, lease_ms = data.draw(WORKERS), data.draw(st.integers(1, 3)), data.draw(LEASE_MS)
        self.calls += 1
        var, token = f"l{self.calls}", f"t{self.calls}"
        if count > 1:
            granted = self.model.lease(count, lease_ms, token)
            refs = [LeaseRef(f"{var}_{n}", item_id, token) for n, (item_id, _) in enumerate(granted)]
            save: dict[str, Json] = {"save": {r.var: f"/{n}" for n, r in enumerate(refs)}} if refs else {}
            expect: Json = {"result": _pairs(granted)}
            self.call(worker, "lease_many", {"count": count, "lease_ms": lease_ms}, expect, **save)
            self.granted += refs
            return
        args: dict[str, Any] = {"lease_ms": lease_ms}
        if data.draw(st.booleans()) and copy.deepcopy(self.model).lease(1, lease_ms, token):
            args |= {"block": True, "timeout_ms": 1000}  # frozen clock: an empty wait never ends
        granted = self.model.lease(1, lease_ms, token)
        if not granted:
            self.call(worker, "lease", args, {"result": None})
            return
        self.call(worker, "lease", args, {"result": _pairs(granted)[0]}, save={var: ""})
        self.granted.append(LeaseRef(var, granted[0][0], token))

    def _renew(self, data: st.DataObject) -> None:
        worker, lease_ms = data.draw(WORKERS), data.draw(LEASE_MS)
        held = _some(data, self._leases())
        renewed = [self.model.renew(ref.id, ref.token, lease_ms) for ref in held]
        if len(held) == 1:
            args: dict[str, Any] = {"lease": f"${{{held[0].var}}}", "lease_ms": lease_ms}
            self.call(worker, "renew", args, {"result": renewed[0]})
        else:
            args = {"leases": [f"${{{ref.var}}}" for ref in held], "lease_ms": lease_ms}
            self.call(worker, "renew_many", args, {"result": renewed})

    def _completed(self, data: st.DataObject, require_lease: bool) -> tuple[list[str], list[Json]]:
        """Draw leases (and, without ``require_lease``, bare ids) and complete them in the model:
        the outcomes and the adapter's item arguments."""
        options = self._leases()
        chosen = _some(data, options if require_lease else st.one_of(options, self._ids(existing=True)))
        outcomes, items = [], []
        for target in chosen:
            if isinstance(target, LeaseRef):
                outcomes.append(self.model.complete(target.id, target.token if require_lease else None))
                items.append({"lease": f"${{{target.var}}}"})
            else:
                outcomes.append(self.model.complete(target))
                items.append({"id": _b(target)})
        return outcomes, items

    def _complete(self, data: st.DataObject) -> None:
        """Complete leases (owner-checked or not) and bare ids, alone or in a batch."""
        worker, require_lease = data.draw(WORKERS), data.draw(st.booleans())
        outcomes, items = self._completed(data, require_lease)
        if len(items) > 1:
            args = {"items": items, "require_lease": require_lease}
            self.call(worker, "complete_many", args, {"result": outcomes})
        else:
            self.call(worker, "complete", {**items[0], "require_lease": require_lease}, _single(outcomes[0]))

    def _complete_and_lease(self, data: st.DataObject) -> None:
        """Complete as ``_complete`` does, then lease up to ``count`` in the same call."""
        worker, require_lease = data.draw(WORKERS), data.draw(st.booleans())
        count, lease_ms = data.draw(st.integers(1, 3)), data.draw(LEASE_MS)
        outcomes, items = self._completed(data, require_lease)
        self.calls += 1
        var, token = f"l{self.calls}", f"t{self.calls}"
        granted = self.model.lease(count, lease_ms, token)
        refs = [LeaseRef(f"{var}_{n}", item_id, token) for n, (item_id, _) in enumerate(granted)]
        args = {"items": items, "count": count, "lease_ms": lease_ms, "require_lease": require_lease}
        expect: Json = {"result": {"outcomes": outcomes, "leases": _pairs(granted)}}
        save: dict[str, Json] = {"save": {r.var: f"/leases/{n}" for n, r in enumerate(refs)}} if refs else {}
        self.call(worker, "complete_and_lease", args, expect, **save)
        self.granted += refs

    def _release(self, data: st.DataObject) -> None:
        worker = data.draw(WORKERS)
        held = _some(data, self._leases())
        outcomes = [self.model.release(ref.id, ref.token) for ref in held]
        if len(held) == 1:
            self.call(worker, "release", {"lease": f"${{{held[0].var}}}"}, _single(outcomes[0]))
        else:
            args = {"leases": [f"${{{ref.var}}}" for ref in held]}
            self.call(worker, "release_many", args, {"result": outcomes})

    # -- time, maintenance and observation -------------------------------------------------
    def _advance(self, data: st.DataObject) -> None:
        ms = data.draw(st.sampled_from(ADVANCE_MS))
        self.model.advance(ms)
        self.run({"advance_time_ms": ms})

    def _light_clean(self, data: st.DataObject) -> None:
        """Time passes (or not), then the cleaner runs, in chunks of ``chunk`` (0: its default)."""
        if data.draw(st.booleans()):
            self._advance(data)
        chunk = data.draw(st.sampled_from([0, 1, 2]))
        requeued, dropped = self.model.light_clean()
        expect = {"result": {"requeued": [_b(item_id) for item_id in requeued], "dropped": dropped}}
        self.call("p", "light_clean", {"chunk": chunk} if chunk else {}, expect)

    def _deep_clean(self, data: st.DataObject) -> None:
        if len(self.model.orphans()) > 1:  # the order of SCAN, and so of the requeue, is open
            return
        requeued, dropped = self.model.deep_clean()
        expect = {"result": {"requeued": [_b(item_id) for item_id in requeued], "dropped": dropped}}
        self.call("p", "deep_clean", {}, expect)

    def _counts(self, data: st.DataObject) -> None:
        self.call(data.draw(st.sampled_from(list(SESSIONS))), "counts", {}, {"result": self.model.counts()})

    def _fault(self, data: st.DataObject) -> None:
        """The script cache flushed (the client must fall back to EVAL), or a session's
        connections killed between calls (its next call may fail); then ``counts``."""
        session = data.draw(st.sampled_from(list(SESSIONS)))
        expect: Json = {"result": self.model.counts()}
        if data.draw(st.booleans()):
            self.run({"fault": "script-flush"})
        else:
            self.run({"fault": "kill-connections", "session": session})
            expect = {"one_of": [expect, {"error": "REDIS_ERROR"}]}
        self.call(session, "counts", {}, expect)

    def _foreign(self, data: st.DataObject) -> None:
        """Someone else writes: a stray entry (a ghost when the item does not exist, else a
        duplicate), an orphan item key (an older client's non-atomic add), or a redis-work-queue
        0.1.x lease key (RWQ-COMPAT-002)."""
        kind = data.draw(st.sampled_from(["queue", "processing", "orphan", "legacy-lease"]))
        item_id = data.draw(self._ids(existing=kind == "legacy-lease"))
        if kind in ("queue", "processing"):
            getattr(self.model, kind).append(item_id)
            self.run({"redis": ["LPUSH", f"${{ns}}:{kind}", item_id]})
        elif kind == "orphan" and item_id not in self.model.items:
            payload = data.draw(st.binary(max_size=3))
            self.model.items[item_id] = payload
            self.run({"redis": ["SET", f"${{ns}}:item:{item_id}", encode_bytes(payload)]})
        elif kind == "legacy-lease":
            self.model.set_legacy_lease(item_id, "g1", 3000)
            self.run({"redis": ["SET", f"${{ns}}:leased_by_session:{item_id}", "g1", "PX", 3000]})

    # -- the whole state -------------------------------------------------------------------
    @invariant()
    def redis_matches_model(self) -> None:
        keys: dict[str, Json] = {"$only": True}
        keys |= {f"${{ns}}:{name}": True for name in self.model.key_names()}
        self.run({"check": {"state": self.model.state(), "keys": keys}})


def _single(outcome: str) -> Json:
    """The expectation for a single complete or release (a lost lease is an error there)."""
    return {"error": "LEASE_LOST"} if outcome == LEASE_LOST else {"result": outcome == DONE}


def _kind_and_message(exc: Exception) -> tuple[str, str]:
    """How run_case would classify a failure (see ``execution.STATUS_BY_KIND``)."""
    if isinstance(exc, (StepFailure, AdapterFailure)):
        return exc.kind, str(exc)
    if isinstance(exc, TemplateError):
        return "case-error", str(exc)
    return "redis", f"the runner's Redis command failed: {type(exc).__name__}: {exc}"


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        stateful_step_count=MAX_STEPS,
        deadline=None,
        derandomize=True,
        database=None,
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
        phases=(Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
    )


def _declares(case: Case) -> bool:
    """Whether ``case`` opens a session with profile declared-keys on."""
    return any((spec.options or {}).get("declared_keys") for spec in case.sessions.values())


def _session_document(spec: SessionSpec) -> dict[str, Any]:
    """A session of a case file: its options, if any."""
    return {"options": spec.options} if spec.options else {}


def regression_case(
    program: list[dict[str, Any]], failure: Failure, case: Case = CASE
) -> tuple[str, dict[str, Any]]:
    """A case file (id, document) that replays ``program`` with the model's expectations, with
    the session options ``case`` gives."""
    digest = hashlib.sha256(json.dumps(program, sort_keys=True).encode()).hexdigest()[:10]
    needs = ["frozen-clock"]
    if any(step.get("fault") == "script-flush" for step in program):
        needs.append("managed-redis")
    case_id = f"{REGRESSIONS}/pbt-{digest}"
    document = {
        "format": 1,
        "group": REGRESSIONS,
        "description": "Counterexamples found by rwq's stateful property test, shrunk; expectations "
        "come from the executable model (rwq.conformance.model).",
        "cases": [
            {
                "id": case_id,
                "title": f"property counterexample ({failure.kind} at step {failure.step})",
                "comment": failure.message[:2000],
                "requirements": list(REQUIREMENTS),
                "profiles": ["core", *(["declared-keys"] * _declares(case))],
                "needs": needs,
                "sessions": {name: _session_document(spec) for name, spec in case.sessions.items()},
                "steps": program,
            }
        ],
    }
    return case_id, document


def export(
    example: Counterexample, out_dir: Path, env: RedisEnvironment, pool: AdapterPool, case: Case = CASE
) -> str:
    """Write ``example`` as a case file under ``out_dir/regressions``, replay it, and say where
    it is and how the replay went."""
    case_id, document = regression_case(example.program, example.failure, case)
    directory = out_dir / REGRESSIONS
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{case_id.split('/')[-1]}.json"
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    try:
        case = next(c for c in load_cases(directory) if c.id == case_id)
    except CaseFileError as exc:
        return f"{path} (not loadable: {exc})"
    replay = run_case(case, env, pool)
    return f"{path} ({len(example.program)} steps; replayed: {replay.status})"


def run_property(
    env: RedisEnvironment,
    pool: AdapterPool,
    *,
    examples: int,
    shrink_s: float = 30.0,
    out_dir: Path | None = None,
    seed_value: int = 0,
    case: Case = CASE,
) -> CaseRun:
    """Run ``examples`` random programs drawn from ``seed_value`` (the same seed, the same
    programs); a failing one is shrunk (for up to ``shrink_s``) and, with ``out_dir``, exported
    as a case file. ``case`` is :data:`CASE` with the session options of the run."""
    started = time.monotonic()
    exploration = Exploration(env, pool, shrink_s, case)
    error: Exception | None = None
    try:
        # Any factory works; hypothesis' stubs only name the class form.
        factory = cast(type[CoreMachine], lambda: CoreMachine(exploration))
        seed(seed_value)(get_state_machine_test(factory, settings=_settings(examples)))()
    except Exception as exc:  # the failure the machines recorded, or hypothesis' own report
        error = exc
    best = exploration.best
    if best is None:
        failure = (
            None if error is None else Failure(None, None, "case-error", f"{type(error).__name__}: {error}")
        )
        status = "pass" if failure is None else STATUS_BY_KIND[failure.kind]
        return CaseRun(status, int((time.monotonic() - started) * 1000), failure, note=exploration.describe())
    failure = best.failure
    if out_dir is not None and best.program:
        where = export(best, out_dir, env, pool, exploration.case)
        failure = Failure(failure.step, failure.verb, failure.kind, f"{failure.message}; case: {where}")
    duration_ms = int((time.monotonic() - started) * 1000)
    status = STATUS_BY_KIND[failure.kind]
    return CaseRun(status, duration_ms, failure, best.stderr, best.transcript, exploration.describe())
