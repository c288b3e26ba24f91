"""The concurrent workload and its checkers: every checker fails on a synthetic history with
its anomaly and stays quiet on explained ones; the reference adapter passes the workload under
faults, a broken adapter does not; and the runner reports both generated cases."""

from __future__ import annotations

import io
import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from rwq.conformance import data
from rwq.conformance.adapter import Timeouts
from rwq.conformance.checkers import FAIL, INFO, INVOKE, OK, Event, check
from rwq.conformance.encoding import Json
from rwq.conformance.environment import RedisEnvironment
from rwq.conformance.pool import REFERENCE_ARGV, AdapterPool
from rwq.conformance.runner import EXIT_CONFORMS, RunConfig, run
from rwq.conformance.workload import WorkloadConfig, run_workload


class History:
    """A synthetic history; the virtual clock moves only through :meth:`jump`."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.vt = 0

    def _log(self, process: str, kind: str, f: str, value: Json) -> None:
        self.events.append(Event(len(self.events), process, kind, f, value, self.vt))

    def invoke(self, process: str, f: str, params: Json) -> None:
        self._log(process, INVOKE, f, params)

    def complete(self, process: str, kind: str, f: str, value: Json = None) -> None:
        self._log(process, kind, f, value)

    def op(self, process: str, f: str, params: Json, result: Json, kind: str = OK) -> None:
        self.invoke(process, f, params)
        self.complete(process, kind, f, result)

    def fault(self, f: str, worker: str) -> None:
        self.op("nemesis", f, {"workers": [worker]}, {"workers": [worker]}, kind=INFO)

    def jump(self, ms: int) -> None:
        self.vt += ms
        self._log("nemesis", INFO, "clock-jump", {"ms": ms})

    def kinds(self, final_keys: tuple[str, ...] = ()) -> list[str]:
        return [anomaly.kind for anomaly in check(self.events, final_keys)]


def b(text: str) -> Json:
    return {"utf8": text}


def lease(item_id: str, token: str, data: str | None = None) -> Json:
    return {"id": b(item_id), "data": b(data or item_id.upper()), "token": token}


def added(history: History, *ids: str) -> None:
    for item_id in ids:
        history.op("p", "add", {"id": b(item_id), "data": b(item_id.upper())}, True)


def leased(history: History, process: str, item_id: str, token: str, lease_ms: int = 5000) -> Json:
    held = lease(item_id, token)
    history.op(process, "lease", {"lease_ms": lease_ms}, held)
    return held


# -- checkers on synthetic histories -------------------------------------------------------------


def test_a_clean_history_has_no_anomaly() -> None:
    h = History()
    added(h, "a", "b")
    one = leased(h, "w1", "a", "t1")
    h.op("w1", "complete", {"lease": one, "require_lease": True}, True)
    h.op("w2", "lease_many", {"count": 2, "lease_ms": 5000}, [lease("b", "t2")])
    h.op("w2", "complete_many", {"items": [{"id": b("b")}]}, ["done"])
    h.op("w2", "complete", {"id": b("b")}, False)
    assert h.kinds() == []


def test_lost_item() -> None:
    h = History()
    added(h, "a")
    leased(h, "w1", "a", "t1")
    assert h.kinds() == ["lost"]


def test_an_item_whose_complete_has_an_unknown_outcome_is_not_lost() -> None:
    h = History()
    added(h, "a", "b")
    h.invoke("w1", "complete", {"id": b("a")})
    h.fault("kill-connections", "w1")
    h.complete("w1", INFO, "complete", {"code": "REDIS_ERROR"})
    h.invoke("w2", "complete_many", {"items": [{"id": b("b")}]})  # never returned
    assert h.kinds() == []


def test_two_first_completers() -> None:
    h = History()
    added(h, "a")
    h.op("w1", "complete", {"id": b("a")}, True)
    h.op("w2", "complete_many", {"items": [{"id": b("a")}]}, ["done"])
    assert h.kinds() == ["double-complete"]


def test_delivery_after_the_first_completer_returned() -> None:
    h = History()
    added(h, "a")
    h.op("w1", "complete", {"id": b("a")}, True)
    leased(h, "w2", "a", "t2")
    assert h.kinds() == ["delivered-after-complete"]


def test_corrupted_payload_and_never_added_id() -> None:
    h = History()
    added(h, "a")
    h.op("w1", "lease", {"lease_ms": 5000}, lease("a", "t1", data="A?"))
    h.op("w1", "complete", {"id": b("a")}, True)
    leased(h, "w2", "ghost", "t2")
    assert h.kinds() == ["corrupted", "corrupted"]


def test_an_error_no_fault_explains() -> None:
    h = History()
    h.fault("kill-connections", "w1")
    h.fault("kill-connections", "w2")
    h.op("w1", "counts", {}, {"queued": 0, "processing": 0})
    h.op("w1", "light_clean", {}, {"code": "REDIS_ERROR"}, kind=INFO)  # on a connection made after it
    h.op("w2", "light_clean", {}, {"code": "REDIS_ERROR"}, kind=INFO)  # w2's first call since its kill
    assert [(a.kind, a.message.split()[0]) for a in check(h.events, ())] == [("unexplained-error", "w1")]


def test_stray_keys_after_the_drain() -> None:
    h = History()
    assert h.kinds(("rwqc:{x}:lease:a",)) == ["stray-keys"]


POLICY = {
    "max_attempts": 2,
    "backoff": "fixed",
    "base_ms": 1000,
    "cap_ms": 0,
    "jitter_pct": 0,
    "dead_max_count": 0,
    "dead_max_age_ms": 0,
}


def _failed_to_death(h: History, dead_list: list[str], dead_data: str = "A") -> list[str]:
    """``a`` leased twice and failed twice under a two-attempt policy: dead-lettered."""
    h.op("p", "set_policy", {"policy": POLICY}, {})
    added(h, "a")
    first = {**lease("a", "t1"), "attempt": 1}
    h.op("w1", "lease", {"lease_ms": 5000}, first)
    h.op("w1", "fail", {"lease": first, "reason": "x"}, {"outcome": "retry", "delay_ms": 1000})
    h.jump(1000)
    second = {**lease("a", "t2"), "attempt": 2}
    h.op("w2", "lease", {"lease_ms": 5000}, second)
    h.op("w2", "fail", {"lease": second, "reason": "x"}, {"outcome": "dead", "delay_ms": 0})
    entries = [{"id": b(i), "dead_at_ms": 1000, "reason": "x", "attempts": 2} for i in dead_list]
    h.op("drain", "dead_list", {"count": 1000}, entries)
    for entry in entries:
        h.op("drain", "dead_get", {"id": entry["id"]}, {**entry, "data": b(dead_data)})
    allowed = ("rwqc:{x}:dead", "rwqc:{x}:dead:data", "rwqc:{x}:dead:info", "rwqc:{x}:policy")
    return [anomaly.kind for anomaly in check(h.events, ("rwqc:{x}:dead", "rwqc:{x}:policy"), allowed)]


def test_a_dead_lettered_item_is_not_lost() -> None:
    assert _failed_to_death(History(), ["a"]) == []


def test_a_dead_lettered_item_missing_from_the_dead_set_is_lost() -> None:
    assert _failed_to_death(History(), []) == ["lost"]


def test_a_dead_item_with_another_payload_is_corrupted() -> None:
    assert _failed_to_death(History(), ["a"], dead_data="B") == ["corrupted"]


def test_a_fail_that_disagrees_with_the_policy() -> None:
    h = History()
    h.op("p", "set_policy", {"policy": POLICY}, {})
    added(h, "a")
    first = {**lease("a", "t1"), "attempt": 1}
    h.op("w1", "lease", {"lease_ms": 5000}, first)
    h.op("w1", "fail", {"lease": first}, {"outcome": "dead", "delay_ms": 0})
    h.op("drain", "dead_list", {}, [{"id": b("a"), "dead_at_ms": 0, "reason": "", "attempts": 1}])
    assert h.kinds() == ["wrong-backoff"]


@pytest.mark.parametrize(("attempt", "requirement"), [(2, "RWQ-RETRY-002"), (3, "RWQ-RETRY-003")])
def test_attempts_must_grow_and_stay_within_the_policy(attempt: int, requirement: str) -> None:
    h = History()
    h.op("p", "set_policy", {"policy": POLICY}, {})
    added(h, "a")
    h.op("w1", "lease", {"lease_ms": 5000}, {**lease("a", "t1"), "attempt": 2})
    h.jump(5001)
    h.op("w2", "lease", {"lease_ms": 5000}, {**lease("a", "t2"), "attempt": attempt})
    h.op("w2", "complete", {"id": b("a")}, True)
    assert [(a.kind, a.requirement) for a in check(h.events, ())] == [("attempts", requirement)]


@pytest.mark.parametrize(("wait", "expected"), [(999, ["early-delivery"]), (1000, [])])
def test_a_delayed_item_is_not_delivered_before_its_due_time(wait: int, expected: list[str]) -> None:
    h = History()
    h.op("p", "add", {"id": b("a"), "data": b("A"), "delay_ms": 1000}, True)
    h.jump(wait)
    h.op("w1", "lease", {"lease_ms": 5000}, lease("a", "t1"))
    h.op("w1", "complete", {"id": b("a")}, True)
    assert h.kinds() == expected


def test_a_delayed_release_or_retry_is_not_delivered_before_its_due_time() -> None:
    h = History()
    added(h, "a", "b")
    one = leased(h, "w1", "a", "t1")
    h.op("w1", "release", {"lease": one, "delay_ms": 2000}, True)
    two = leased(h, "w1", "b", "t2")
    h.op("w1", "fail", {"lease": two}, {"outcome": "retry", "delay_ms": 3000})
    h.jump(2000)
    leased(h, "w2", "a", "t3")
    leased(h, "w2", "b", "t4")
    h.op("w2", "complete_many", {"items": [{"id": b("a")}, {"id": b("b")}]}, ["done", "done"])
    assert [(a.kind, a.requirement) for a in check(h.events, ())] == [("early-delivery", "RWQ-RETRY-004")]


def _two_deliveries(h: History, between: Any) -> list[str]:
    added(h, "a")
    one = leased(h, "w1", "a", "t1", lease_ms=2000)
    between(one)
    leased(h, "w2", "a", "t2")
    h.op("w2", "complete", {"id": b("a")}, True)
    return h.kinds()


def test_second_delivery_of_a_held_lease() -> None:
    assert _two_deliveries(History(), lambda one: None) == ["double-lease"]


def test_a_lease_is_held_up_to_and_including_its_expiry_time() -> None:
    h = History()
    assert _two_deliveries(h, lambda one: h.jump(2000)) == ["double-lease"]


def test_an_expired_lease_explains_the_second_delivery() -> None:
    h = History()
    assert _two_deliveries(h, lambda one: h.jump(2001)) == []


@pytest.mark.parametrize(
    ("method", "result", "expected"), [("renew", True, ["double-lease"]), ("renew_many", [False], [])]
)
def test_a_renewal_extends_the_lease_and_a_failed_one_does_not(
    method: str, result: Json, expected: list[str]
) -> None:
    h = History()

    def renew_then_wait(one: Json) -> None:
        params = {"lease": one} if method == "renew" else {"leases": [one]}
        h.op("w1", method, {**params, "lease_ms": 20_000}, result)
        h.jump(3000)

    assert _two_deliveries(h, renew_then_wait) == expected


@pytest.mark.parametrize("kind", [OK, INFO])
def test_a_release_that_may_have_happened_explains_the_second_delivery(kind: str) -> None:
    h = History()
    assert _two_deliveries(h, lambda one: h.op("w1", "release", {"lease": one}, True, kind=kind)) == []


def test_a_refused_release_or_complete_does_not_end_the_lease() -> None:
    h = History()

    def refused(one: Json) -> None:
        h.op("w1", "release", {"lease": one}, {"code": "LEASE_LOST"}, kind=FAIL)
        h.op("w3", "complete", {"lease": one, "require_lease": True}, {"code": "LEASE_LOST"}, kind=FAIL)

    assert _two_deliveries(h, refused) == ["double-lease"]


def test_a_crashed_holder_alone_explains_nothing() -> None:
    h = History()

    def crash(one: Json) -> None:
        h.complete("nemesis", INFO, "kill-process", {"workers": ["w1"]})
        h.op("w1", "renew", {"lease": one, "lease_ms": 2000}, {"adapter": "crash"}, kind=INFO)

    assert _two_deliveries(h, crash) == ["double-lease"]


def test_concurrent_deliveries_of_one_item() -> None:
    h = History()
    added(h, "a")
    h.invoke("w1", "lease", {"lease_ms": 5000})
    h.invoke("w2", "lease", {"lease_ms": 5000})
    h.complete("w2", OK, "lease", lease("a", "t2"))
    h.complete("w1", OK, "lease", lease("a", "t1"))
    h.op("w1", "complete", {"id": b("a")}, True)
    assert h.kinds() == ["double-lease"]


# -- the workload against adapters ---------------------------------------------------------------


@pytest.fixture(scope="module")
def env() -> Iterator[RedisEnvironment]:
    environment = RedisEnvironment.managed()
    if environment.clock != "frozen":
        environment.close()
        pytest.fail("the workload needs a frozen clock: libfaketime and libtcmalloc-minimal4")
    yield environment
    environment.close()


def pool_of(env: RedisEnvironment, argv: list[str], log_dir: Path) -> AdapterPool:
    return AdapterPool(
        argv, redis_url=env.url, timeouts=Timeouts(), log_dir=log_dir, emit=lambda *a, **k: None
    )


def test_reference_adapter_passes_the_workload(env: RedisEnvironment, tmp_path: Path) -> None:
    pool = pool_of(env, list(REFERENCE_ARGV), tmp_path)
    try:
        outcome = run_workload(env, pool, WorkloadConfig(max_ops=200, seed=7), tmp_path)
    finally:
        pool.close()
    assert (outcome.status, outcome.failure) == ("pass", None)
    events = [json.loads(line) for line in (tmp_path / "workload" / "history.jsonl").read_text().splitlines()]
    assert sum(e["type"] == INVOKE and e["process"].startswith("w") for e in events) == 200
    nemesis = {e["f"] for e in events if e["process"] == "nemesis"}
    assert "clock-jump" in nemesis
    assert len(nemesis) >= 3
    assert json.loads((tmp_path / "workload" / "anomalies.json").read_text())["anomalies"] == []
    assert env.namespace_keys("rwqc:") == []


LEASE_WITHOUT_KEY = """
from rwq.conformance import reference_adapter as ra
from rwq.conformance.encoding import decode_bytes

lease = ra.METHODS["lease"]


def leaky_lease(queue, params):
    held = lease(queue, params)
    if held is not None:  # the lease key is lost: a cleaner hands the item out again
        queue._redis.delete(queue.keys.lease(decode_bytes(held["id"]).decode()))
    return held


ra.METHODS["lease"] = leaky_lease
ra.main()
"""


@pytest.mark.parametrize("profiles", [None, ("core",)])
def test_the_workload_exercises_retry_and_delay_when_declared(
    env: RedisEnvironment, tmp_path: Path, profiles: tuple[str, ...] | None
) -> None:
    pool = pool_of(env, list(REFERENCE_ARGV), tmp_path)
    try:
        outcome = run_workload(env, pool, WorkloadConfig(seed=1, profiles=profiles), tmp_path)
    finally:
        pool.close()
    assert (outcome.status, outcome.failure) == ("pass", None)
    events = [json.loads(line) for line in (tmp_path / "workload" / "history.jsonl").read_text().splitlines()]
    methods = {e["f"] for e in events if e["type"] == OK}
    delayed = any(
        isinstance(e["value"], dict) and "delay_ms" in e["value"] for e in events if e["type"] == INVOKE
    )
    dead = [e["value"] for e in events if e["type"] == OK and e["f"] == "dead_list"]
    if profiles is None:
        # Whether an item ends dead depends on the threads' interleaving, not only on the seed;
        # the dead-letter checks themselves are pinned by the synthetic histories above.
        assert {"set_policy", "fail", "dead_list"} <= methods
        assert delayed
        assert dead
        assert ("dead_get" in methods) == bool(dead[-1])
    else:
        assert not methods & {"set_policy", "fail", "dead_list", "dead_get"}
        assert not delayed
    assert env.namespace_keys("rwqc:") == []


def test_a_lease_that_does_not_hold_is_caught(env: RedisEnvironment, tmp_path: Path) -> None:
    script = tmp_path / "leaky_lease.py"
    script.write_text(LEASE_WITHOUT_KEY)
    # A double lease needs a clean and a second lease to land while the first holder works, which
    # the threads' interleaving decides; a few seeds (bounded) make that certain in practice.
    messages = []
    for seed in range(7, 12):
        out = tmp_path / f"seed-{seed}"
        out.mkdir()
        pool = pool_of(env, [sys.executable, str(script)], out)
        try:
            outcome = run_workload(env, pool, WorkloadConfig(max_ops=200, seed=seed), out)
        finally:
            pool.close()
        messages.append(outcome.failure.message if outcome.failure is not None else outcome.status)
        if "double-lease" in messages[-1]:
            break
    assert "double-lease" in messages[-1], messages


def test_the_runner_reports_the_generated_cases(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    trivial = {
        "format": 1,
        "group": "smoke",
        "cases": [
            {
                "id": "smoke/counts",
                "title": "counts of an empty queue",
                "requirements": ["RWQ-COUNT-001"],
                "sessions": {"p": {}},
                "steps": [{"call": "counts", "session": "p", "expect": {"result": {"queued": 0}}}],
            }
        ],
    }
    (cases / "smoke.json").write_text(json.dumps(trivial))
    out = tmp_path / "out"
    config = RunConfig(
        adapter=shlex.join(REFERENCE_ARGV),
        out=out,
        cases_dir=cases,
        property_examples=2,
        workload=True,
        console=Console(file=io.StringIO()),
    )
    assert run(config) == EXIT_CONFORMS
    report = json.loads((out / "report.json").read_text())
    assert not data.schema_errors("conformance-report", report)
    assert {c["id"]: c["status"] for c in report["cases"]} == {
        "smoke/counts": "pass",
        "property/core-model": "pass",
        "workload/faults": "pass",
    }
    assert report["requirements"]["RWQ-DELIVERY-002"]["cases"] == ["property/core-model", "workload/faults"]
