"""The coverage matrix (conformance/coverage/): which cases exercise every client setting on
every path, every numeric argument at its boundaries, and every error code on every path.

Sans-IO: it reads case documents and the hand-kept ``waivers.json`` as parsed JSON and returns
the matrix. A cell's cases are derived from what each case does (the method of a call step, its
arguments, its session's options, its expectation), so a cell cannot silently lose its cases;
a cell no case can reach carries a reasoned waiver, and a waiver that matches a cell with cases
is an error. ``tools/coverage_matrix.py`` writes and checks ``matrix.json``.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

Json = Any
MAX_MS = 31_536_000_000
BATCH = 1000

SETTINGS = (
    "legacy_lease_key",
    "flat_in_flight",
    "declared_keys",
    "wait_replicas",
    "wait_timeout_ms",
    "shards",
    "delay",
    "policy.max_attempts",
    "policy.backoff",
    "policy.base_ms",
    "policy.cap_ms",
    "policy.jitter_pct",
    "policy.dead_max_count",
    "policy.dead_max_age_ms",
)
PATHS = (
    "single",
    "batch",
    "batch-over-1000",
    "again",
    "blocking-first",
    "blocking-wait",
    "blocking-again",
    "composite",
    "composite-again",
    "light-clean-pages",
    "deep-clean-pages",
    "dead-set",
    "shard-check",
    "shard-visit",
    "shard-bell",
    "shard-composite",
    "shard-ring",
    "live-workers",
    "stats",
    "periodic",
)
ERRORS = (
    "INVALID_ARGUMENT",
    "LEASE_LOST",
    "UNSUPPORTED_SERVER",
    "REDIS_ERROR",
    "WRONG_TYPE",
    "NOT_REPLICATED",
    "SHARD_MISMATCH",
)


@dataclass(frozen=True, slots=True)
class Argument:
    """A numeric argument: ``method.name`` (``policy.<field>`` inside set_policy's policy,
    ``open.<option>`` for a session option), its range, and whether it is a duration."""

    method: str
    name: str
    minimum: int
    maximum: int
    duration: bool

    @property
    def key(self) -> str:
        return f"{self.method}.{self.name}"


def _arguments() -> tuple[Argument, ...]:
    durations = [
        ("add", "delay_ms", 0),
        ("add_many", "delay_ms", 0),
        ("release", "delay_ms", 0),
        ("release_many", "delay_ms", 0),
        ("lease", "lease_ms", 1),
        ("lease", "timeout_ms", 0),
        ("lease_many", "lease_ms", 1),
        ("renew", "lease_ms", 1),
        ("renew_many", "lease_ms", 1),
        ("complete_and_lease", "lease_ms", 1),
        ("light_clean", "pace_ms", 0),
        ("fail", "delay_ms", 0),
        ("fail", "fallback_delay_ms", 0),
        ("open", "wait_timeout_ms", 1),
    ]
    found = [Argument(m, n, low, MAX_MS, True) for m, n, low in durations]
    found.append(Argument("worker_beat", "ttl_ms", 1000, 3_600_000, True))
    for method in ("set_policy", "set_policy_if_absent"):
        found += [
            Argument(method, f"policy.{n}", 0, MAX_MS, True) for n in ("base_ms", "cap_ms", "dead_max_age_ms")
        ]
        found += [
            Argument(method, "policy.max_attempts", 0, 1_000_000, False),
            Argument(method, "policy.jitter_pct", 0, 100, False),
            Argument(method, "policy.dead_max_count", 0, 100_000_000, False),
        ]
    counts = [
        ("lease_many", "count", 1, BATCH),
        ("complete_and_lease", "count", 1, BATCH),
        ("light_clean", "chunk", 1, BATCH),
        ("deep_clean", "chunk", 1, BATCH),
        ("dead_list", "offset", 0, 100_000_000),
        ("dead_list", "count", 1, BATCH),
        ("workers", "offset", 0, 1_000_000),
        ("workers", "count", 1, BATCH),
        ("open", "wait_replicas", 0, 1000),
        ("open", "shards", 1, 1024),
    ]
    found += [Argument(m, n, low, high, False) for m, n, low, high in counts]
    return tuple(sorted(found, key=lambda a: a.key))


ARGUMENTS = _arguments()
# Value classes of a numeric argument; unit tellers only mean something for durations.
CLASSES = ("min", "max", "below-min", "above-max", "zero", "999", "1001", "1500", "1.5", "'5'", "true")
NON_INTEGERS: dict[str, Json] = {"1.5": 1.5, "'5'": "5", "true": True}
UNIT_TELLERS = {"999": 999, "1001": 1001, "1500": 1500}


def boundary_value(argument: Argument, klass: str) -> tuple[Json, bool] | None:
    """The value of a class for an argument and whether a client accepts it; ``None`` when the
    class does not exist for it (zero where zero is the minimum or just below it)."""
    if klass in NON_INTEGERS:
        return NON_INTEGERS[klass], False
    if klass in UNIT_TELLERS:
        value = UNIT_TELLERS[klass]
        return value, argument.minimum <= value <= argument.maximum
    if klass == "zero":
        return None if argument.minimum in (0, 1) else (0, False)
    value = {
        "min": argument.minimum,
        "max": argument.maximum,
        "below-min": argument.minimum - 1,
        "above-max": argument.maximum + 1,
    }[klass]
    return value, argument.minimum <= value <= argument.maximum


def cell_ids() -> list[str]:
    """Every cell of the matrix, in a stable order."""
    cells = [f"settings/{s}/{p}" for s in SETTINGS for p in PATHS]
    cells += [f"errors/{e}/{p}" for e in ERRORS for p in PATHS]
    cells += [
        f"boundaries/{a.key}/{k}" for a in ARGUMENTS for k in CLASSES if boundary_value(a, k) is not None
    ]
    return cells


# --- what a case does -------------------------------------------------------------------------

BATCHES = {"add_many": "items", "renew_many": "leases", "complete_many": "items", "release_many": "leases"}
LEASING = {"lease", "lease_many", "complete_and_lease"}
DEAD_SET = {"dead_list", "dead_get", "dead_requeue", "dead_purge"}
RINGING = {"add", "add_many", "release", "release_many", "dead_requeue"}
LIVE = {"worker_beat", "worker_leave", "workers"}
STATS = {"stats_enable", "stats_disable", "stats"}
PERIODIC = {
    "schedule_put",
    "schedule_remove",
    "schedule_pause",
    "schedule_resume",
    "schedule_list",
    "schedule_fire",
    "schedule_next",
    "scheduler_tick",
}
_LOOP = re.compile(r"for i = 1, (\d+) do redis\.call\('[LR]PUSH'")
POLICY_FIELDS = (
    "max_attempts",
    "backoff",
    "base_ms",
    "cap_ms",
    "jitter_pct",
    "dead_max_count",
    "dead_max_age_ms",
)


def _active(name: str, value: Json) -> bool:
    """Whether a stored policy field does something: a number other than 0, exponential backoff."""
    return value == "exponential" if name == "backoff" else value not in (0, "0")


@dataclass(slots=True)
class Step:
    """A call step of a case, with what the case had done before it."""

    case: str
    method: str
    args: Mapping[str, Json]
    expect: Mapping[str, Json] | None
    options: Mapping[str, Json]
    waited: bool
    ghosts: bool
    ids_before: int
    delay: bool
    policy: frozenset[str]
    undeclared: bool
    timed: bool
    paths: set[str] = field(default_factory=set)

    def errors(self) -> set[str]:
        """The error codes the step must return (every alternative of a one_of being an error)."""
        if not self.expect:
            return set()
        if "error" in self.expect:
            return {self.expect["error"]}
        alternatives = self.expect.get("one_of", [])
        if alternatives and all("error" in alt for alt in alternatives):
            return {alt["error"] for alt in alternatives}
        return set()

    def may_refuse(self) -> bool:
        """INVALID_ARGUMENT is among what the step accepts: the value is not shown valid."""
        return "INVALID_ARGUMENT" in str(self.expect)


def _count(method: str, args: Mapping[str, Json]) -> int | None:
    if method in BATCHES:
        items = args.get(BATCHES[method])
        return len(items) if isinstance(items, list) else None
    if method == "lease_many":
        count = args.get("count")
        return count if type(count) is int else None
    return None


def _pushed(step: Mapping[str, Json]) -> int:
    """How many ids a raw command puts in a list (LPUSH/RPUSH, or an EVAL loop of pushes)."""
    command = step.get("redis") or []
    if command and command[0] in ("LPUSH", "RPUSH"):
        return len(command) - 2
    if command and command[0] == "EVAL":
        loop = _LOOP.search(str(command[1]))
        return int(loop[1]) if loop else 0
    return 0


def _policy_fields(step: Mapping[str, Json]) -> set[str]:
    """Active policy fields a step stores: a set_policy call, or a raw HSET of P:policy."""
    if step.get("call") in ("set_policy", "set_policy_if_absent"):
        policy = (step.get("args") or {}).get("policy") or {}
        return {name for name in POLICY_FIELDS if name in policy and _active(name, policy[name])}
    command = step.get("redis") or []
    if len(command) > 2 and command[0] == "HSET" and str(command[1]).endswith(":policy"):
        # A field given as bytes ({"base64": ...}) is no policy field.
        pairs = {k: v for k, v in zip(command[2::2], command[3::2], strict=False) if isinstance(k, str)}
        return {name for name in POLICY_FIELDS if name in pairs and _active(name, pairs[name])}
    return set()


def _delays(step: Mapping[str, Json]) -> bool:
    args = step.get("args") or {}
    if any(type(args.get(n)) is int and args[n] > 0 for n in ("delay_ms", "fallback_delay_ms")):
        return True
    command = step.get("redis") or []
    return bool(command) and command[0] == "ZADD" and str(command[1]).endswith(":delayed")


def _timed(steps: list[Mapping[str, Json]]) -> bool:
    """The case observes time: it moves the clock, checks a TTL, or expects a delay in a result."""
    checks = str([s["check"] for s in steps if "check" in s])
    expects = str([s["expect"] for s in steps if "expect" in s])
    return (
        any("advance_time_ms" in s for s in steps)
        or any(word in checks for word in ("'remaining_ms'", "'pttl_ms'"))
        or "'delay_ms'" in expects
    )


def steps_of(document: Mapping[str, Json]) -> Iterator[Step]:
    """Every call step of a case file, classified."""
    defaults = document.get("defaults", {})
    for case in document["cases"]:
        sessions = case.get("sessions", defaults.get("sessions", {}))
        needs = {*defaults.get("needs", ()), *case.get("needs", ())}
        raw_steps = case["steps"]
        timed = _timed(raw_steps)
        ghosts = ids = 0
        delay = False
        policy: set[str] = set()
        for index, step in enumerate(raw_steps):
            pushed = _pushed(step)
            ghosts = max(ghosts, pushed)
            args = step.get("args") or {}
            for name in ("items", "leases"):
                if step.get("call") in ("add_many",) and isinstance(args.get(name), list):
                    ids += len(args[name])
            ids += pushed + (step.get("call") == "add")
            delay = delay or _delays(step)
            policy |= _policy_fields(step)
            if "call" not in step:
                continue
            session = sessions.get(step["session"], {})
            waited = False
            if "async" in step:
                for later in raw_steps[index + 1 :]:
                    if later.get("wait_blocked") == step["session"]:
                        waited = True
                    if later.get("await") == step["async"]:
                        break
            expect = step.get("expect")
            if "async" in step:
                expect = next((s.get("expect") for s in raw_steps if s.get("await") == step["async"]), None)
            found = Step(
                case=case["id"],
                method=step["call"],
                args=args,
                expect=expect,
                options=session.get("options", {}),
                waited=waited,
                ghosts=ghosts > BATCH,
                ids_before=ids,
                delay=delay or _delays(step),
                policy=frozenset(policy),
                undeclared="undeclared-keys" in needs,
                timed=timed,
            )
            found.paths = _paths(found)
            yield found


def _paths(step: Step) -> set[str]:
    method, args = step.method, step.args
    blocking = method == "lease" and args.get("block") is True
    found = set()
    if method in ("add", "renew", "complete", "release", "fail") or (method == "lease" and not blocking):
        found.add("single")
    count = _count(method, args)
    if count is not None:
        found.add("batch" if count <= BATCH else "batch-over-1000")
    if step.ghosts and method in ("lease", "lease_many") and not blocking:
        found.add("again")
    if blocking:
        found.add("blocking-again" if step.ghosts else "blocking-wait" if step.waited else "blocking-first")
    if method == "complete_and_lease":
        found.add("composite-again" if step.ghosts else "composite")
    chunk = args.get("chunk")
    if method in ("light_clean", "deep_clean") and type(chunk) is int and 0 < chunk < step.ids_before:
        found.add(f"{method.replace('_', '-')}-pages")
    if method in DEAD_SET:
        found.add("dead-set")
    if method in LIVE:
        found.add("live-workers")
    if method in STATS:
        found.add("stats")
    if method in PERIODIC:
        found.add("periodic")
    if "shards" in step.options:
        found.add("shard-check")
        if method in ("lease", "lease_many"):
            found.add("shard-bell" if blocking else "shard-visit")
        if method == "complete_and_lease":
            found.add("shard-composite")
        if method in RINGING:
            found.add("shard-ring")
    return found


def _has_setting(step: Step, setting: str) -> bool:
    options = step.options
    if setting == "declared_keys":
        return options.get("declared_keys") is True or not step.undeclared
    if setting in ("legacy_lease_key", "flat_in_flight"):
        return options.get(setting) is True
    if setting == "wait_replicas":
        return type(options.get(setting)) is int and options[setting] > 0
    if setting in ("wait_timeout_ms", "shards"):
        return setting in options
    if setting == "delay":
        return step.delay
    return setting.removeprefix("policy.") in step.policy


def _value(step: Step, argument: Argument) -> tuple[bool, Json]:
    """Whether the step passes the argument, and its value."""
    if argument.method == "open":
        return argument.name in step.options, step.options.get(argument.name)
    if step.method != argument.method:
        return False, None
    holder: Json = step.args
    for part in argument.name.split("."):
        if not isinstance(holder, Mapping) or part not in holder:
            return False, None
        holder = holder[part]
    return True, holder


def _same(a: Json, b: Json) -> bool:
    return type(a) is type(b) and a == b


def derive(documents: Iterable[Mapping[str, Json]]) -> dict[str, set[str]]:
    """Cell id -> the ids of the cases that exercise it, from the case documents."""
    cells: dict[str, set[str]] = {cell: set() for cell in cell_ids()}
    for document in documents:
        for step in steps_of(document):
            for path in step.paths:
                if "INVALID_ARGUMENT" not in step.errors():
                    for setting in SETTINGS:
                        if _has_setting(step, setting):
                            cells[f"settings/{setting}/{path}"].add(step.case)
                for code in step.errors():
                    if code in ERRORS:
                        cells[f"errors/{code}/{path}"].add(step.case)
            for argument in ARGUMENTS:
                present, value = _value(step, argument)
                if not present:
                    continue
                for klass in CLASSES:
                    expected = boundary_value(argument, klass)
                    if expected is None or not _same(value, expected[0]):
                        continue
                    refused = step.errors() == {"INVALID_ARGUMENT"}
                    accepted = (
                        expected[1] and not step.may_refuse() and (klass not in UNIT_TELLERS or step.timed)
                    )
                    if accepted or (not expected[1] and refused):
                        cells[f"boundaries/{argument.key}/{klass}"].add(step.case)
    return cells


# --- waivers and hand-listed cells ------------------------------------------------------------


def _case_calls(documents: Iterable[Mapping[str, Json]]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for document in documents:
        for case in document["cases"]:
            found[case["id"]] = {s["call"] for s in case["steps"] if "call" in s}
    return found


def matrix(
    documents: list[Mapping[str, Json]], manual: Mapping[str, Json]
) -> tuple[dict[str, Json], list[str]]:
    """The matrix document and the problems the check reports: an empty cell without a waiver
    (or one still listed as ``open``, a gap being filled), a waiver matching a cell with cases or
    no cell at all, an ``open`` cell that has cases, a hand-listed case that does not exist or
    does not call the method the entry names."""
    cells = derive(documents)
    calls = _case_calls(documents)
    problems: list[str] = []
    for entry in manual.get("listed", []):
        cell, method = entry["cell"], entry["method"]
        if cell not in cells:
            problems.append(f"listed: no cell {cell}")
            continue
        for case in entry["cases"]:
            if method not in calls.get(case, set()):
                problems.append(f"listed: case {case} of {cell} does not exist or never calls {method}")
            else:
                cells[cell].add(case)
    reasons: dict[str, str] = {}
    for waiver in manual.get("waivers", []):
        matched = [c for c in cells if any(fnmatch.fnmatchcase(c, p) for p in waiver["cells"])]
        if not matched:
            problems.append(f"waiver matches no cell: {waiver['cells']}")
        for cell in matched:
            if cells[cell]:
                problems.append(f"waiver for {cell}, which has cases: {sorted(cells[cell])[:3]}")
            reasons.setdefault(cell, waiver["reason"])
    known_open = set(manual.get("open", []))
    out: dict[str, Json] = {}
    for cell, cases in cells.items():
        if cases:
            out[cell] = {"cases": sorted(cases)}
            if cell in known_open:
                problems.append(f"open cell {cell} has cases now: remove it from 'open'")
        elif cell in reasons:
            out[cell] = {"waiver": reasons[cell]}
        else:
            out[cell] = {"empty": True}
            if cell not in known_open:
                problems.append(f"empty cell without a waiver: {cell}")
    summary = {
        "cells": len(out),
        "with_cases": sum("cases" in c for c in out.values()),
        "waived": sum("waiver" in c for c in out.values()),
        "empty": sum("empty" in c for c in out.values()),
    }
    document = {
        "format": 1,
        "description": "Generated by tools/coverage_matrix.py --write from conformance/cases and "
        "conformance/coverage/waivers.json; see conformance/README.md, 'The coverage matrix'.",
        "dimensions": {
            "settings": list(SETTINGS),
            "paths": list(PATHS),
            "errors": list(ERRORS),
            "arguments": {
                a.key: {"minimum": a.minimum, "maximum": a.maximum, "duration": a.duration} for a in ARGUMENTS
            },
            "classes": list(CLASSES),
        },
        "summary": summary,
        "cells": out,
    }
    return document, problems
