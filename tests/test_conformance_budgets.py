"""Fast failures that say what happened, and parallel runs: a port whose blocking lease hangs
fails each such case within its release budget with a message about the server clock; --jobs
keeps the report in case order; --fail-fast stops; schema errors name the field."""

from __future__ import annotations

import json
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rwq.conformance import data
from rwq.conformance.cases import load_cases
from rwq.conformance.execution import command_subject
from rwq.conformance.matching import Outcome as Result
from rwq.conformance.matching import expectation_failure
from rwq.conformance.pool import expand
from rwq.conformance.redis_server import RedisServer
from rwq.conformance.runner import EXIT_CONFORMS, EXIT_NONCONFORMANT, Run, needs_server_alone
from test_conformance_runner import ALWAYS_FIRST, conformance, reference_variant

MUTANTS = Path(__file__).resolve().parents[1] / "conformance" / "mutants"
IGNORES_TIMEOUT = f"{shlex.quote(sys.executable)} {shlex.quote(str(MUTANTS / 'blocking_ignores_timeout.py'))}"


@pytest.mark.timeout(240)
def test_a_blocking_lease_that_ignores_its_timeout_fails_fast_and_names_the_clock(tmp_path: Path) -> None:
    """The written mutant blocking_ignores_timeout never returns from a lease whose timeout has
    passed: each such case fails within the release budget (2 s) with kind blocked, the message
    says how far the runner moved the server clock against the call's timeout, the hung process
    is replaced, and the cases after it still run and pass."""
    started = time.monotonic()
    outcome = conformance(tmp_path, adapter=IGNORES_TIMEOUT, pattern="lease/blocking/**", jobs=2)
    elapsed = time.monotonic() - started
    hung = {c["id"]: c for c in outcome.report["cases"] if c["failure"] and c["failure"]["kind"] == "blocked"}
    assert outcome.code == EXIT_NONCONFORMANT
    assert outcome.report["aborted"] is None
    assert set(hung) >= {"lease/blocking/timeout-returns-nothing", "lease/blocking/gives-up-at-deadline"}
    assert {c["status"] for c in hung.values()} == {"timeout"}
    message = hung["lease/blocking/timeout-returns-nothing"]["failure"]["message"]
    assert message.startswith("server clock advanced 5,001 ms past the first call of the lease of step 1")
    assert "its timeout was 5,000 ms; the call has not returned 2.0 s after the await began" in message
    assert all(c["duration_ms"] < 10_000 for c in hung.values())
    passed = [c["id"] for c in outcome.report["cases"] if c["status"] == "pass"]
    assert len(passed) >= 8  # the cases an item wakes, before and after the hung ones
    # 13 cases, 4 of them hung at 2 s each, on 2 workers: well under the old 10 s per hang
    assert elapsed < 60, elapsed


def test_a_lease_that_never_blocks_fails_at_the_wait(tmp_path: Path) -> None:
    """wait_blocked fails as soon as the call it waits for has returned, with its reply."""
    adapter = reference_variant(
        tmp_path,
        "never-blocks",
        """
        def call(self, args):
            if args["method"] == "lease" and args["params"].get("block"):
                return None
            return super().call(args)
        """,
    )
    outcome = conformance(tmp_path, adapter=adapter, pattern="lease/blocking/timeout-returns-nothing")
    case = outcome.case("lease/blocking/timeout-returns-nothing")
    failure = case["failure"]
    assert (failure["step"], failure["verb"], failure["kind"]) == (2, "wait_blocked", "mismatch")
    assert (
        "the lease of step 1 (session 'w1') returned before its connection blocked in Redis: ok null"
        in (failure["message"])
    )
    # The case fails at its wait's budget (2 s), not at the 10 s request watchdog; its own duration
    # leaves out the run's start (imports, the adapter process), which a loaded machine stretches.
    assert case["duration_ms"] < 6000


def test_a_generic_timeout_names_the_step_and_the_wait(tmp_path: Path) -> None:
    adapter = reference_variant(
        tmp_path,
        "hangs-on-counts",
        """
        def call(self, args):
            if args["method"] == "counts":
                import time
                time.sleep(60)
            return super().call(args)
        """,
    )
    outcome = conformance(
        tmp_path, adapter=adapter, pattern="counts/values/empty-queue", timeout_multiplier=0.1
    )
    failure = outcome.case("counts/values/empty-queue")["failure"]
    assert failure["kind"] == "timeout"
    assert re.fullmatch(
        r"step 1 \(call counts on 'p'\): the runner waited 1\.0 s for the reply to request \d+ "
        r"\(call counts on session 'p'\); none came",
        failure["message"],
    ), failure["message"]


def test_jobs_keep_the_case_order_and_the_results(tmp_path: Path) -> None:
    serial = conformance(tmp_path, pattern="add/**", jobs=1)
    parallel = conformance(tmp_path, pattern="add/**", jobs=3)
    assert serial.code == parallel.code == EXIT_CONFORMS
    assert [(c["id"], c["status"]) for c in serial.report["cases"]] == [
        (c["id"], c["status"]) for c in parallel.report["cases"]
    ]
    finished = [e["case"]["id"] for e in parallel.events if e["event"] == "case_finished"]
    assert finished == [c["id"] for c in parallel.report["cases"]]
    assert (serial.report["environment"]["jobs"], parallel.report["environment"]["jobs"]) == (1, 3)


def test_fail_fast_stops_after_the_first_unexpected_failure(tmp_path: Path) -> None:
    adapter = reference_variant(tmp_path, "always-first", ALWAYS_FIRST)
    outcome = conformance(tmp_path, adapter=adapter, pattern="complete/**", jobs=1, fail_fast=True)
    statuses = [c["status"] for c in outcome.report["cases"]]
    first = next(i for i, status in enumerate(statuses) if status == "fail")
    assert outcome.code == EXIT_NONCONFORMANT
    assert set(statuses[first + 1 :]) == {"not-run"}
    assert outcome.report["stopped"].startswith("--fail-fast: stopped after the unexpected fail of complete/")
    assert outcome.report["aborted"] is None


def test_cases_that_need_the_server_alone_are_derived_from_their_steps() -> None:
    cases = {case.id: case for case in expand(load_cases(data.cases_dir()))}
    flush = next(c for c in cases.values() if any(s.get("fault") == "script-flush" for s in c.steps))
    moves = next(
        c
        for c in cases.values()
        if any("advance_time_ms" in s for s in c.steps) and needs_server_alone(c, frozen=False) is None
    )
    global_read = next(c for c in cases.values() if any(s.get("redis", [""])[0] == "DBSIZE" for s in c.steps))
    assert "flushes the server's script cache" in str(needs_server_alone(flush, frozen=True))
    assert "moves the frozen clock of the whole server" in str(needs_server_alone(moves, frozen=True))
    assert "runs DBSIZE, which reads or changes the whole server" in str(
        needs_server_alone(global_read, True)
    )
    assert needs_server_alone(cases["add/single/creates-item"], frozen=True) is None


def test_on_a_shared_redis_a_whole_server_case_runs_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On an external Redis the workers share one server: a case that reads the whole server
    (INFO) waits for the running cases, and none starts until it is done."""
    step = {"call": "add", "session": "p", "args": {"id": {"utf8": "a"}, "data": {"utf8": "A"}}}
    plain = [
        {"id": f"g/plain/c{i}", "title": "t", "requirements": ["RWQ-ADD-001"], "steps": [step]}
        for i in range(6)
    ]
    alone = {
        "id": "g/alone/info",
        "title": "t",
        "requirements": ["RWQ-ADD-001"],
        "steps": [step, {"redis": ["INFO", "server"]}],
    }
    body = {
        "format": 1,
        "group": "g",
        "defaults": {"sessions": {"p": {}}},
        "cases": [*plain[:3], alone, *plain[3:]],
    }
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "g.json").write_text(json.dumps(body))
    running: list[str] = []
    overlaps: list[tuple[str, ...]] = []
    original = Run.run_one

    def observed(self: Run, case: Any, env: Any, pool: Any) -> dict[str, Any]:
        running.append(case.id)
        overlaps.append(tuple(running))
        time.sleep(0.2)
        try:
            return original(self, case, env, pool)
        finally:
            running.remove(case.id)

    monkeypatch.setattr(Run, "run_one", observed)
    with RedisServer() as server:
        outcome = conformance(tmp_path, cases_dir=tmp_path / "cases", redis_url=server.url, jobs=3)
    assert outcome.code == EXIT_CONFORMS, outcome.text[-2000:]
    assert ("g/alone/info",) in overlaps
    assert not [seen for seen in overlaps if "g/alone/info" in seen and len(seen) > 1]
    assert max(len(seen) for seen in overlaps) > 1  # the plain ones did run side by side


def test_a_short_token_names_the_field_and_never_shows_the_token(tmp_path: Path) -> None:
    adapter = reference_variant(
        tmp_path,
        "short-token",
        """
        def call(self, args):
            if args["method"] == "lease":
                import rwq.protocol.operations as ops
                ops.new_token = lambda: "abcd"
            return super().call(args)
        """,
    )
    outcome = conformance(tmp_path, adapter=adapter, pattern="encoding/token/at-least-16-bytes")
    record = outcome.case("encoding/token/at-least-16-bytes")
    assert record["status"] == "warn"
    assert record["failure"]["message"].endswith(
        ":lease:a (the lease token of item 'a'): 4 bytes is less than the minimum of 16"
    )
    assert record["failure"]["message"].startswith("STRLEN rwqc:{")


def test_schema_errors_name_the_field_and_its_title() -> None:
    lease = {"id": {"utf8": "a"}, "data": {"utf8": "A"}, "token": ""}
    assert data.schema_errors("adapter-protocol", lease, "/$defs/results/lease", "result") == [
        "result.token (a lease token): 0 characters is less than the minimum of 1"
    ]
    leases = [{"id": {"utf8": "a"}, "data": {"utf8": "A"}, "token": "secret-token", "attempt": -1}]
    problems = data.schema_errors("adapter-protocol", leases, "/$defs/results/lease_many", "result")
    assert problems == ["result[0].attempt: -1 is less than the minimum of 0"]
    too_long = {"id": {"utf8": "a"}, "data": {"utf8": "A"}, "token": "secret-token"}
    problem = expectation_failure(
        {"result_matches": {"properties": {"token": {"title": "a lease token", "maxLength": 4}}}},
        Result(True, too_long),
    )
    assert problem == "result.token (a lease token): 12 characters is more than the maximum of 4"
    assert "secret" not in str(problem)


def test_unique_items_is_linear_and_keeps_json_equality() -> None:
    schema = {"type": "array", "uniqueItems": True}
    many = [{"id": str(i), "n": [i, {"x": True}]} for i in range(5000)]
    started = time.process_time()  # CPU time: a pairwise check of 5,000 items takes far more
    assert expectation_failure({"result_matches": schema}, Result(True, many)) is None
    assert time.process_time() - started < 1
    assert expectation_failure({"result_matches": schema}, Result(True, [{"a": 1}, {"a": 1.0}])) == (
        "result: item 1 repeats an earlier item (the items must be unique)"
    )
    assert expectation_failure({"result_matches": schema}, Result(True, [1, True, [1], [True]])) is None


def test_a_raw_command_is_named_with_what_its_key_holds() -> None:
    class Context:
        ns = "rwqc:{abc}"

    assert command_subject(Context(), ["STRLEN", "rwqc:{abc}:lease:a"]) == (  # type: ignore[arg-type]
        "STRLEN rwqc:{abc}:lease:a (the lease token of item 'a')"
    )
    assert command_subject(Context(), ["LLEN", "rwqc:{abc}:queue"]) == (  # type: ignore[arg-type]
        "LLEN rwqc:{abc}:queue (the ready list)"
    )
    assert command_subject(Context(), ["GET", "other"]) == "GET other"  # type: ignore[arg-type]
