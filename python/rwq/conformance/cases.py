"""Case files: loading, schema validation, defaults, consistency checks and selection."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import data

DEFAULT_PROFILES = ("core",)
PROXY_FAULTS = frozenset({"lose-reply", "drop-call", "script-error", "restart"})
"""Faults the runner's proxy injects (:mod:`.proxy`): only on ``proxied`` sessions."""


class CaseFileError(Exception):
    """One or more case files are invalid; the message lists every problem."""


@dataclass(frozen=True)
class SessionSpec:
    """A named client instance in a case."""

    name: str
    impl: str = "subject"
    own_process: bool = False
    queue: str | None = None
    options: dict[str, Any] | None = None
    refusable: bool = False
    """``open`` may fail with a domain error (a client that checks its prefix when created);
    every call on the session then gets that error, as from a client that checks on first use."""
    proxied: bool = False
    """Connected through the runner's fault proxy (:mod:`.proxy`); needs ``own_process``."""
    untagged: bool = False
    """The prefix is the namespace without its hash tag braces, ``rwqc:<token>[:<queue>]``."""
    as_shard: str | None = None
    """The prefix is ``{rwqc:<token>#<as_shard>}`` (then ``:<queue>`` if ``queue`` is given): for
    ``0``..``1023`` alone, shard ``as_shard`` of the sharded queue named by the namespace
    (RWQ-KEYS-010)."""
    empty_prefix: bool = False
    """The prefix is the empty string, which every client must refuse (RWQ-KEYS-011); needs
    ``refusable``."""
    literal_prefix: str | None = None
    """The prefix is this string, not under the case's namespace: prefixes no namespace can form
    (one byte, 512 bytes, a first segment such as ``item``); the runner deletes its keys after
    the case. Needs ``managed-redis`` and ``standalone``."""


@dataclass(frozen=True)
class Case:
    """One conformance case, with its group's defaults applied."""

    id: str
    title: str
    group: str
    source: str
    requirements: tuple[str, ...]
    profiles: tuple[str, ...]
    needs: tuple[str, ...]
    sessions: dict[str, SessionSpec]
    steps: tuple[dict[str, Any], ...]
    aliases: tuple[str, ...] = ()
    should: bool = False
    """The case checks SHOULDs only: its failure is a warning (status ``warn``), not a failure."""


def load_cases(directory: Path) -> list[Case]:
    """Every case under ``directory`` (``**/*.json``), validated; CaseFileError lists all problems."""
    files = sorted(directory.rglob("*.json"))
    if not files:
        raise CaseFileError(f"no case files (*.json) under {directory}")
    problems: list[str] = []
    cases: list[Case] = []
    for path in files:
        name = str(path.relative_to(directory))
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            problems.append(f"{name}: {exc}")
            continue
        errors = data.schema_errors("conformance-case", document)
        if errors:
            problems += [f"{name}: {error}" for error in errors]
            continue
        for raw in document["cases"]:
            case = _build(document, raw, name)
            problems += [f"{name}: {case.id}: {problem}" for problem in lint(case)]
            cases.append(case)
    seen: dict[str, str] = {}
    for case in cases:
        for name in (case.id, *case.aliases):
            if name in seen:
                problems.append(f"{case.source}: id {name!r} is already used in {seen[name]}")
            seen[name] = case.source
    if problems:
        raise CaseFileError("invalid case files:\n  " + "\n  ".join(problems))
    return cases


def _build(document: dict[str, Any], raw: dict[str, Any], source: str) -> Case:
    defaults = document.get("defaults", {})
    sessions = raw.get("sessions", defaults.get("sessions", {}))
    return Case(
        id=raw["id"],
        title=raw["title"],
        group=document["group"],
        source=source,
        requirements=tuple(raw["requirements"]),
        profiles=tuple(raw.get("profiles", defaults.get("profiles", DEFAULT_PROFILES))),
        needs=tuple(sorted({*defaults.get("needs", ()), *raw.get("needs", ())})),
        sessions={name: SessionSpec(name, **spec) for name, spec in sessions.items()},
        steps=tuple(raw["steps"]),
        aliases=tuple(raw.get("aliases", ())),
        should=bool(raw.get("should", False)),
    )


def lint(case: Case) -> list[str]:
    """Consistency rules the schema cannot express (sessions, async calls, needs)."""
    problems: list[str] = []
    if not case.id.startswith(case.group + "/"):
        problems.append(f"the id must start with the file's group {case.group!r}/")
    busy: dict[str, str] = {}  # session -> async name in flight
    started: set[str] = set()
    for index, step in enumerate(case.steps, 1):
        session = step.get("session") or step.get("wait_blocked") or step.get("close") or step.get("reset")
        if session is not None and session not in case.sessions:
            problems.append(f"step {index}: unknown session {session!r}")
            continue
        if ("close" in step or "reset" in step) and busy:
            problems.append(
                f"step {index}: close or reset while {', '.join(sorted(busy.values()))} is in flight"
            )
        if "call" in step:
            if step["session"] in busy:
                problems.append(
                    f"step {index}: session {step['session']!r} is still busy with {busy[step['session']]!r}"
                )
            if "async" in step:
                name = step["async"]
                if name in started:
                    problems.append(f"step {index}: async name {name!r} is used twice")
                if not case.sessions[step["session"]].own_process:
                    problems.append(f"step {index}: async calls need a session with own_process: true")
                started.add(name)
                busy[step["session"]] = name
            if step.get("sends_nothing") and "managed-redis" not in case.needs:
                problems.append(f"step {index}: sends_nothing needs 'managed-redis' in needs (a wire check)")
        elif "await" in step:
            owner = next((s for s, name in busy.items() if name == step["await"]), None)
            if owner is None:
                problems.append(f"step {index}: await {step['await']!r} has no async call in flight")
            else:
                del busy[owner]
        elif step.get("fault") == "kill-session-process":
            targets = [session] if session else list(case.sessions)
            if not all(case.sessions[name].own_process for name in targets):
                problems.append(f"step {index}: kill-session-process needs sessions with own_process: true")
        elif (
            "advance_time_ms" in step
            and "clock-control" not in case.needs
            and "frozen-clock" not in case.needs
        ):
            problems.append(f"step {index}: advance_time_ms needs 'clock-control' or 'frozen-clock' in needs")
        elif "rewind_time_ms" in step and "clock-rewind" not in case.needs:
            problems.append(f"step {index}: rewind_time_ms needs 'clock-rewind' in needs")
        elif step.get("fault") == "script-flush" and "managed-redis" not in case.needs:
            problems.append(f"step {index}: script-flush needs 'managed-redis' in needs")
        elif step.get("fault") in PROXY_FAULTS:
            targets = [session] if session else list(case.sessions)
            if not all(case.sessions[name].proxied for name in targets):
                problems.append(f"step {index}: {step['fault']} needs sessions with proxied: true")
            if (step["fault"] == "script-error") != ("reply" in step):
                problems.append(f"step {index}: a reply is given with script-error, and only with it")
    if busy:
        problems.append(f"async call(s) never awaited: {', '.join(sorted(busy.values()))}")
    if any(spec.own_process for spec in case.sessions.values()) and "multi-process" not in case.needs:
        problems.append("own_process sessions need 'multi-process' in needs")
    for spec in case.sessions.values():
        if spec.empty_prefix and not (spec.refusable and "managed-redis" in case.needs):
            problems.append(f"session {spec.name!r}: empty_prefix needs refusable and 'managed-redis'")
        if spec.literal_prefix is not None and not {"managed-redis", "standalone"} <= set(case.needs):
            problems.append(f"session {spec.name!r}: literal_prefix needs 'managed-redis' and 'standalone'")
        mixed = spec.queue or spec.untagged or spec.as_shard or spec.empty_prefix
        if spec.literal_prefix is not None and mixed:
            problems.append(f"session {spec.name!r}: literal_prefix is the whole prefix")
        if spec.proxied and not (spec.own_process and "managed-redis" in case.needs):
            problems.append(f"session {spec.name!r}: proxied needs own_process and 'managed-redis' in needs")
    return problems


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A case-id pattern: ``*`` matches within one segment, ``**`` across segments."""
    parts = re.split(r"(\*\*|\*)", pattern)
    body = "".join(".*" if part == "**" else "[^/]*" if part == "*" else re.escape(part) for part in parts)
    return re.compile(body + r"\Z")


def matches(case: Case, pattern: str) -> bool:
    """``-k``: a glob (as in :func:`glob_regex`) when the pattern has ``*``, else a substring of
    the id or an alias."""
    names = (case.id, *case.aliases)
    if "*" in pattern:
        regex = glob_regex(pattern)
        return any(regex.match(name) for name in names)
    return any(pattern in name for name in names)
