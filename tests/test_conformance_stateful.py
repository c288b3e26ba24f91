"""The executable model and the stateful property test: the model follows the SPEC on small
examples, the reference adapter agrees with it over random programs, and a broken adapter gets
a shrunk counterexample written out as a case file that replays the failure."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rwq.conformance import data
from rwq.conformance.adapter import Timeouts
from rwq.conformance.cases import load_cases
from rwq.conformance.environment import RedisEnvironment
from rwq.conformance.model import DONE, GONE, LEASE_LOST, QueueModel
from rwq.conformance.pool import REFERENCE_ARGV, AdapterPool
from rwq.conformance.stateful import run_property

# -- the model -----------------------------------------------------------------------------------


def test_model_leases_in_order_and_skips_ghosts_and_held_items() -> None:
    model = QueueModel()
    assert model.add_many([("a", b"A"), ("b", b"B"), ("a", b"X")]) == [True, True, False]
    model.queue.insert(0, "ghost")
    model.set_legacy_lease("a", "g1", 100)
    assert model.lease(2, 1000, "t1") == [("b", b"B")]
    assert (model.queue, model.processing) == ([], ["a", "b"])  # a's only entry stays with its holder
    assert model.state()["leases"] == {"b": {"remaining_ms": 1000}}


def test_model_first_completer_and_requeued_copy() -> None:
    model = QueueModel()
    model.add_many([("a", b"A")])
    assert model.lease(1, 1000, "t1") == [("a", b"A")]
    model.advance(1001)
    assert model.light_clean() == (["a"], 0)
    assert model.complete("a", "t1") == LEASE_LOST
    assert model.complete("a") == DONE
    assert model.complete("a") == GONE
    assert model.release("a", "t9") == GONE  # to anyone, once the item is gone
    assert (model.queue, model.processing, model.items) == ([], [], {})


def test_model_lease_lives_until_its_expiry_instant() -> None:
    model = QueueModel()
    model.add_many([("a", b"A")])
    model.lease(1, 1000, "t1")
    model.advance(1000)
    assert model.renew("a", "t1", 500)
    model.advance(501)
    assert not model.renew("a", "t1", 500)
    assert model.release("a", "t1") == LEASE_LOST


# -- the property test through adapters ----------------------------------------------------------


@pytest.fixture(scope="module")
def env() -> Iterator[RedisEnvironment]:
    environment = RedisEnvironment.managed()
    if environment.clock != "frozen":
        environment.close()
        pytest.fail("the property test needs a frozen clock: libfaketime and libtcmalloc-minimal4")
    yield environment
    environment.close()


PoolFor = Callable[[list[str]], AdapterPool]


@pytest.fixture
def pool_for(env: RedisEnvironment, tmp_path: Path) -> Iterator[PoolFor]:
    """Adapter pools for a command line, closed after the test."""
    pools: list[AdapterPool] = []

    def make(argv: list[str]) -> AdapterPool:
        pool = AdapterPool(
            argv, redis_url=env.url, timeouts=Timeouts(), log_dir=tmp_path, emit=lambda *a, **k: None
        )
        pools.append(pool)
        return pool

    yield make
    for pool in pools:
        pool.close()


def test_reference_adapter_matches_the_model(env: RedisEnvironment, pool_for: PoolFor) -> None:
    outcome = run_property(env, pool_for(list(REFERENCE_ARGV)), examples=40)
    assert (outcome.status, outcome.failure) == ("pass", None)
    assert env.namespace_keys("rwqc:") == []


def test_a_counterexample_is_shrunk_and_exported_as_a_case(
    env: RedisEnvironment, pool_for: PoolFor, tmp_path: Path
) -> None:
    argv = [sys.executable, str(data.REPO / "conformance" / "mutants" / "add_overwrites.py")]
    outcome = run_property(env, pool_for(argv), examples=30, shrink_s=5, out_dir=tmp_path)
    assert outcome.status == "fail"
    assert outcome.failure is not None
    assert outcome.failure.kind == "mismatch"
    assert "replayed: fail" in outcome.failure.message
    [case] = load_cases(tmp_path / "regressions")
    assert case.id.startswith("regressions/pbt-")
    assert "frozen-clock" in case.needs
    assert len(case.steps) <= 10
    assert outcome.failure.step == len(case.steps)  # the program ends with the failing step
    assert [step.get("call") for step in case.steps if "call" in step][-1] in ("add", "add_many")


def test_a_crashing_adapter_is_reported_without_shrinking(
    env: RedisEnvironment, pool_for: PoolFor, tmp_path: Path
) -> None:
    script = tmp_path / "crash_on_renew.py"
    script.write_text(
        textwrap.dedent(
            """
            import os
            from rwq.conformance import reference_adapter as ra

            ra.METHODS["renew"] = ra.METHODS["renew_many"] = lambda q, p: os._exit(9)
            ra.main()
            """
        )
    )
    outcome = run_property(env, pool_for([sys.executable, str(script)]), examples=30, out_dir=tmp_path)
    assert outcome.status == "crash"
    assert outcome.failure is not None
    assert outcome.failure.verb == "call"
    assert "exit code 9" in outcome.failure.message
    assert "replayed: crash" in outcome.failure.message
