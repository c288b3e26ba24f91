"""The suite's data and helpers: schemas, the shipped cases, case lint, matching, templates,
the logical state and state surgery."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]

from rwq.conformance import data
from rwq.conformance.cases import CaseFileError, glob_regex, load_cases
from rwq.conformance.environment import RedisEnvironment
from rwq.conformance.matching import (
    Outcome,
    TemplateError,
    difference,
    expectation_failure,
    resolve_pointer,
    substitute,
)
from rwq.conformance.redis_server import RedisServer
from rwq.conformance.reference_adapter import METHODS
from rwq.conformance.state import logical_state

SPEC = data.REPO / "SPEC.md"


@pytest.mark.parametrize("name", sorted(data.SCHEMA_FILES))
def test_schemas_are_valid_2020_12(name: str) -> None:
    Draft202012Validator.check_schema(data.schema(name))


def test_method_lists_agree() -> None:
    protocol = data.schema("adapter-protocol")["$defs"]
    assert (
        set(protocol["params"]) == set(protocol["results"]) == set(protocol["method"]["enum"]) == set(METHODS)
    )


def test_protocol_examples_validate() -> None:
    messages: list[dict[str, Any]] = [
        {
            "v": 1,
            "id": 1,
            "op": "hello",
            "args": {"protocols": [1], "redis": {"url": "redis://127.0.0.1:1/0"}},
        },
        {
            "v": 1,
            "id": 2,
            "op": "open",
            "args": {"session": "w1", "queue": "rwqc:{ab}", "client_name": "rwqc-ab-w1"},
        },
        {"v": 1, "id": 3, "op": "call", "args": {"session": "w1", "method": "counts", "params": {}}},
        {"v": 1, "id": 4, "op": "shutdown"},
        {"v": 1, "id": 3, "ok": {"queued": 0, "processing": 0}},
        {"v": 1, "id": 5, "err": {"kind": "domain", "code": "INVALID_ARGUMENT", "message": "lease_ms"}},
    ]
    for message in messages:
        assert data.schema_errors("adapter-protocol", message) == [], message
    assert data.schema_errors("adapter-protocol", {"v": 1, "id": 1, "op": "open", "args": {}})
    assert data.schema_errors(
        "adapter-protocol", {"v": 1, "id": 1, "ok": 1, "err": {"kind": "domain", "code": "X"}}
    )
    assert data.schema_errors("adapter-protocol", {"id": {"base64": "not base64!"}}, "/$defs/leaseRef")


def test_shipped_cases() -> None:
    cases = load_cases(data.cases_dir())
    assert len(cases) >= 25
    assert len({case.id for case in cases}) == len(cases)
    if SPEC.exists():
        defined = set(re.findall(r"\*\*(RWQ-[A-Z]+-\d{3})\*\*", SPEC.read_text()))
        cited = {req for case in cases for req in case.requirements}
        assert cited <= defined, sorted(cited - defined)


def write_case(tmp_path: Path, case: dict[str, Any], **document: Any) -> Path:
    body = {
        "format": 1,
        "group": "g",
        "cases": [{"id": "g/x", "title": "t", "requirements": ["RWQ-ADD-001"], **case}],
        **document,
    }
    (tmp_path / "g.json").write_text(json.dumps(body))
    return tmp_path


@pytest.mark.parametrize(
    ("case", "problem"),
    [
        ({"steps": [{"frobnicate": 1}]}, "cases[0].steps[0]"),
        ({"requirements": ["nope"], "steps": [{"advance_time_ms": 1}]}, "cases[0].requirements[0]"),
        ({"id": "other/x", "steps": [{"check": {"keys": {}}}]}, "must start with the file's group"),
        ({"steps": [{"call": "add", "session": "zz"}]}, "unknown session 'zz'"),
        ({"steps": [{"advance_time_ms": 5}]}, "needs 'clock-control'"),
        ({"needs": ["frozen-clock"], "steps": [{"rewind_time_ms": 5}]}, "needs 'clock-rewind'"),
        ({"steps": [{"fault": "script-flush"}]}, "needs 'managed-redis'"),
        (
            {
                "sessions": {"w": {}},
                "steps": [
                    {"call": "lease", "session": "w", "args": {"lease_ms": 1}, "async": "h"},
                    {"await": "h"},
                ],
            },
            "own_process: true",
        ),
        (
            {
                "sessions": {"w": {"own_process": True}},
                "needs": ["multi-process"],
                "steps": [{"call": "lease", "session": "w", "async": "h"}],
            },
            "never awaited: h",
        ),
        (
            {
                "sessions": {"w": {"own_process": True}},
                "needs": ["multi-process"],
                "steps": [
                    {"call": "lease", "session": "w", "async": "h"},
                    {"call": "counts", "session": "w"},
                    {"await": "h"},
                ],
            },
            "still busy",
        ),
        (
            {"sessions": {"w": {"own_process": True}}, "steps": [{"call": "counts", "session": "w"}]},
            "multi-process",
        ),
        ({"steps": [{"await": "h"}]}, "no async call in flight"),
        (
            {
                "sessions": {"w": {"proxied": True}},
                "needs": ["managed-redis"],
                "steps": [{"call": "counts", "session": "w"}],
            },
            "proxied needs own_process",
        ),
        (
            {"needs": ["managed-redis"], "steps": [{"fault": "lose-reply", "session": "p"}]},
            "lose-reply needs sessions with proxied: true",
        ),
        (
            {
                "sessions": {"w": {"own_process": True, "proxied": True}},
                "needs": ["managed-redis", "multi-process"],
                "steps": [{"fault": "script-error", "session": "w"}],
            },
            "a reply is given with script-error",
        ),
    ],
)
def test_invalid_cases_are_rejected(tmp_path: Path, case: dict[str, Any], problem: str) -> None:
    case.setdefault("sessions", {"p": {}})
    with pytest.raises(CaseFileError, match=re.escape(problem)):
        load_cases(write_case(tmp_path, case))


def test_defaults_apply(tmp_path: Path) -> None:
    directory = write_case(
        tmp_path,
        {"needs": ["frozen-clock"], "steps": [{"advance_time_ms": 1}]},
        defaults={"profiles": ["delay"], "needs": ["clock-control"], "sessions": {"p": {"queue": "one"}}},
    )
    (case,) = load_cases(directory)
    assert case.profiles == ("delay",)
    assert case.needs == ("clock-control", "frozen-clock")
    assert case.sessions["p"].queue == "one"


def test_duplicate_ids_are_rejected(tmp_path: Path) -> None:
    write_case(tmp_path, {"sessions": {"p": {}}, "aliases": ["g/x"], "steps": [{"check": {"keys": {}}}]})
    with pytest.raises(CaseFileError, match="already used"):
        load_cases(tmp_path)


@pytest.mark.parametrize(
    ("pattern", "name", "hit"),
    [
        ("lease/*", "lease/fifo", True),
        ("lease/*", "lease/fifo/oldest", False),
        ("lease/**", "lease/fifo/oldest", True),
        ("lease/*/oldest", "lease/fifo/oldest", True),
        ("*/fifo/*", "lease/fifo/oldest", True),
        ("lease/fi*", "lease/fifo/oldest", False),
        ("lease/fifo/oldest", "lease/fifo/oldest-first", False),
    ],
)
def test_glob(pattern: str, name: str, hit: bool) -> None:
    assert bool(glob_regex(pattern).match(name)) is hit


def test_difference() -> None:
    assert difference({"utf8": "A"}, {"base64": "QQ=="}) is None
    assert difference({"base64": "/w=="}, {"utf8": "A"}) == 'expected {"base64":"/w=="}, got {"utf8":"A"}'
    assert difference(1, True) == "expected 1, got true"
    assert difference(1, 1.0) is None
    assert difference({"a": 1}, {"a": 1, "b": 2}) is not None
    assert difference({"a": 1}, {"a": 1, "b": 2}, ignore_extra_members=True) is None
    assert difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == "at /a/1/b: expected 2, got 3"
    assert difference([1], [1, 2]) == "expected [1], got [1,2] (2 entries)"
    assert difference({"a": 1}, {}) == "at /a: missing, expected 1"


def test_templates_and_pointers() -> None:
    variables = {"ns": "rwqc:{ab}", "lease": {"id": {"utf8": "a"}, "token": "t"}, "tag": {"utf8": "x"}}
    assert substitute({"k": "${lease}", "${ns}:item:${tag}": ["${ns}"]}, variables) == {
        "k": {"id": {"utf8": "a"}, "token": "t"},
        "rwqc:{ab}:item:x": ["rwqc:{ab}"],
    }
    with pytest.raises(TemplateError, match="not set"):
        substitute("${missing}", variables)
    with pytest.raises(TemplateError, match="not text"):
        substitute("x${lease}", variables)
    assert resolve_pointer([{"id": 1}, {"id": 2}], "/1/id") == 2
    assert resolve_pointer({"a/b": 1}, "/a~1b") == 1
    with pytest.raises(TemplateError):
        resolve_pointer({"a": 1}, "/b")


def test_expectations() -> None:
    ok, lost = (
        Outcome(True, {"id": {"utf8": "a"}, "token": "t"}),
        Outcome(False, code="LEASE_LOST", message="m"),
    )
    assert expectation_failure(None, ok) is None
    assert expectation_failure(None, lost) == "expected success, got error LEASE_LOST: m"
    assert expectation_failure({"result": {"id": {"base64": "YQ=="}}}, ok) is None
    assert expectation_failure({"error": "LEASE_LOST"}, lost) is None
    assert expectation_failure({"error": "INVALID_ARGUMENT"}, lost) is not None
    assert expectation_failure({"result_matches": {"required": ["token"]}}, ok) is None
    assert expectation_failure({"result_matches": {"required": ["nope"]}}, ok) is not None
    assert expectation_failure({"one_of": [{"error": "REDIS_ERROR"}, {"error": "LEASE_LOST"}]}, lost) is None
    assert "no alternative" in str(expectation_failure({"one_of": [{"result": 1}, {"result": 2}]}, ok))


def test_logical_state(redis_server: RedisServer) -> None:
    env = RedisEnvironment.external(redis_server.url)
    ns = env.new_namespace()
    raw = env.client
    raw.execute_command("LPUSH", f"{ns}:queue", "a", "b")
    raw.execute_command("LPUSH", f"{ns}:processing", "old", "new")
    raw.execute_command("SET", f"{ns}:item:a", b"\xff")
    raw.execute_command("SET", f"{ns}:lease:new", "t", "PX", 60000)
    raw.execute_command("SET", f"{ns}:leased_by_session:old", "t")
    state = logical_state(raw, ns)
    assert state["queue"] == ["a", "b"]
    assert state["processing"] == ["old", "new"]
    assert state["items"] == {"a": {"base64": "/w=="}}
    assert 59000 < state["leases"]["new"]["remaining_ms"] <= 60000
    assert state["legacy_leases"] == {"old": {"remaining_ms": None}}
    env.drop_namespace(ns)
    assert env.namespace_keys(ns) == []
    env.close()


def test_state_surgery_shortens_only_the_namespace(redis_server: RedisServer) -> None:
    env = RedisEnvironment.external(redis_server.url)
    assert env.clock == "surgery"
    ns, other = env.new_namespace(), env.new_namespace()
    for prefix in (ns, other):
        env.client.execute_command("SET", f"{prefix}:lease:a", "t", "PX", 10000)
        env.client.execute_command("SET", f"{prefix}:lease:b", "t", "PX", 30000)
    env.client.execute_command("SET", f"{ns}:item:a", "A")
    env.advance(ns, 20000)
    assert env.client.execute_command("EXISTS", f"{ns}:lease:a") == 0
    assert 9000 < env.client.execute_command("PTTL", f"{ns}:lease:b") <= 10000
    assert env.client.execute_command("PTTL", f"{ns}:item:a") == -1
    assert 29000 < env.client.execute_command("PTTL", f"{other}:lease:b") <= 30000
    env.drop_namespace(ns)
    env.drop_namespace(other)
    env.close()
