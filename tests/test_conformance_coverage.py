"""Every requirement of SPEC.md is either checked by a conformance case or waived with a reason
(``conformance/waivers.json``), and the suite's data agrees with the requirement list."""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]

from rwq.conformance import data, requirements, stateful, workload
from rwq.conformance.cases import Case, load_cases
from rwq.conformance.runner import EXIT_CONFORMS

WAIVERS = data.REPO / "conformance" / "waivers.json"
WAIVERS_SCHEMA = data.REPO / "schemas" / "waivers.schema.json"
ENFORCED = ("MUST", "MUST NOT")
PROFILE_OF_SECTION = {
    "15.": "retry",
    "16.": "delay",
    "17.": "ack",
    "18.": "flat",
    "19.": "sharded",
    "20.": "declared-keys",
    "21.": "workers",
    "22.": "stats",
    "23.": "periodic",
}
"""Requirements of these sections belong to a profile: the cases citing them must claim it."""
RETRY_METHODS = frozenset(
    {
        "fail",
        "set_policy",
        "set_policy_if_absent",
        "get_policy",
        "dead_list",
        "dead_get",
        "dead_requeue",
        "dead_purge",
    }
)
# Optional behaviour of a core section that has a profile of its own (SPEC §14).
OPTION_REQUIREMENTS = {"RWQ-COMPAT-004": "legacy-lease"}


@cache
def _requirements() -> dict[str, dict[str, Any]]:
    """Active requirements by id (a retired one, if the list ever marks one, does not count)."""
    return {rid: req for rid, req in requirements.load().items() if req.get("status", "active") == "active"}


@cache
def _cases() -> tuple[Case, ...]:
    return tuple(load_cases(data.cases_dir()))


@cache
def _waivers() -> dict[str, str]:
    document = json.loads(WAIVERS.read_text())
    waivers: dict[str, str] = document["waivers"]
    return waivers


def _cited() -> dict[str, list[str]]:
    """Requirement -> the cases citing it, including the generated checks a default run makes."""
    cited: dict[str, list[str]] = {}
    for case in (*_cases(), stateful.CASE, workload.CASE):
        for req in case.requirements:
            cited.setdefault(req, []).append(case.id)
    return cited


def test_waivers_file_is_valid() -> None:
    schema = json.loads(WAIVERS_SCHEMA.read_text())
    Draft202012Validator.check_schema(schema)
    errors = [
        error.message for error in Draft202012Validator(schema).iter_errors(json.loads(WAIVERS.read_text()))
    ]
    assert errors == []


def test_every_must_has_a_case_or_a_waiver() -> None:
    cited, waived = _cited(), _waivers()
    missing = [
        f"{rid} ({req['level']}): {req['text'][:80]}"
        for rid, req in _requirements().items()
        if req["level"] in ENFORCED and rid not in cited and rid not in waived
    ]
    assert missing == [], "requirements with neither a case nor a waiver:\n" + "\n".join(missing)


def test_core_musts_have_core_cases() -> None:
    """An implementation that claims only core gets a verdict on every core MUST (sections 3-13)."""
    generated = (stateful.CASE, workload.CASE)
    core_cited = {
        req for case in (*_cases(), *generated) if case.profiles == ("core",) for req in case.requirements
    }
    missing = [
        rid
        for rid, req in _requirements().items()
        if req["level"] in ENFORCED
        and int(req["section"].split(".")[0]) <= 13  # §14 on: profiles
        and rid not in core_cited
        and rid not in _waivers()
    ]
    assert missing == [], f"core requirements cited only by profile cases: {missing}"


def test_waivers_name_known_uncited_requirements() -> None:
    known, cited = _requirements(), _cited()
    unknown = sorted(set(_waivers()) - set(known))
    assert unknown == [], f"waivers for requirement ids that SPEC.md does not define: {unknown}"
    both = {rid: cited[rid] for rid in _waivers() if rid in cited}
    assert both == {}, f"waived requirements that cases cite (drop the waiver or the citation): {both}"


def test_cases_cite_known_requirements() -> None:
    known = set(_requirements())
    unknown = {
        case.id: sorted(set(case.requirements) - known) for case in _cases() if set(case.requirements) - known
    }
    assert unknown == {}, f"cases citing requirement ids that SPEC.md does not define: {unknown}"


def test_case_ids_are_unique() -> None:
    names = Counter(name for case in _cases() for name in (case.id, *case.aliases))
    assert [name for name, count in names.items() if count > 1] == []


def test_profile_requirements_are_cited_by_profile_cases() -> None:
    """A case that checks a retry or delay requirement runs only when that profile is claimed."""
    wrong = {}
    for case in _cases():
        for req in case.requirements:
            section = _requirements()[req]["section"]
            profile = next(
                (p for prefix, p in PROFILE_OF_SECTION.items() if section.startswith(prefix)), None
            )
            if profile is not None and profile not in case.profiles:
                wrong[case.id] = f"cites {req} ({section}) without profile {profile!r}: {list(case.profiles)}"
    assert wrong == {}


def test_core_cases_claim_only_core() -> None:
    """Cases that cite no profile requirement and call no profile method stay in profile core."""
    wrong: dict[str, str] = {}
    for case in _cases():
        calls = {step["call"] for step in case.steps if "call" in step}
        profiled = any(
            _requirements()[req]["section"][:3] in PROFILE_OF_SECTION or req in OPTION_REQUIREMENTS
            for req in case.requirements
        )
        delayed = any("delay_ms" in step.get("args", {}) for step in case.steps if "call" in step)
        if not profiled and not calls & RETRY_METHODS and not delayed and case.profiles != ("core",):
            wrong[case.id] = f"checks only core behaviour but claims {list(case.profiles)}"
        if calls & RETRY_METHODS and "retry" not in case.profiles:
            wrong[case.id] = f"calls {sorted(calls & RETRY_METHODS)} without profile retry"
        if delayed and "delay" not in case.profiles:
            wrong[case.id] = "passes delay_ms without profile delay"
    assert wrong == {}


@pytest.fixture(scope="module")
def reference_report(reference_run: tuple[int, Path, str]) -> dict[str, Any]:
    code, out, _text = reference_run
    assert code == EXIT_CONFORMS
    report: dict[str, Any] = json.loads((out / "report.json").read_text())
    return report


@pytest.mark.timeout(600)  # the first to need reference_report: a whole run of the suite
def test_report_verdicts_cover_every_requirement(reference_report: dict[str, Any]) -> None:
    verdicts: dict[str, dict[str, Any]] = reference_report["requirements"]
    assert set(verdicts) <= set(_requirements())
    uncovered = sorted(set(_requirements()) - set(verdicts) - set(_waivers()))
    assert uncovered == [], f"requirements the reference run has no verdict for and no waiver: {uncovered}"
    on_cluster = {  # judged by the cluster run (make conformance-cluster), not-run on one server
        rid
        for rid in verdicts
        if all("cluster" in case.needs for case in _cases() if rid in case.requirements)
    }
    assert {rid: v["verdict"] for rid, v in verdicts.items() if v["verdict"] != "pass"} == dict.fromkeys(
        on_cluster, "not-run"
    )
    assert reference_report["claimed_profiles"] == [
        "core",
        "retry",
        "delay",
        "ack",
        "flat",
        "sharded",
        "legacy-lease",
        "declared-keys",
        "workers",
        "stats",
        "periodic",
    ]


def test_cases_of_shoulds_cite_only_shoulds() -> None:
    """A case marked should: true warns instead of failing, so every requirement it cites must be a
    SHOULD (or SHOULD NOT): a MUST never hides behind a warning."""
    wrong = {
        case.id: [req for req in case.requirements if not _requirements()[req]["level"].startswith("SHOULD")]
        for case in _cases()
        if case.should
    }
    assert {case_id: reqs for case_id, reqs in wrong.items() if reqs} == {}
    assert wrong, "no case checks a SHOULD as a warning"
