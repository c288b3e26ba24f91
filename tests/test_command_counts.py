"""The guard of issue #22: the Redis commands each canonical script runs on its common paths,
counted from MONITOR (exact, never timed), against the counts stored in lua/command-counts.json.

A script that runs more commands than stored fails here; one that runs fewer fails too, so that the
stored counts stay exact. Either way the fix is ``python -m bench.counts --write`` and a review of
the change of cost it shows (``git diff lua/command-counts.json``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from bench.counts import SCENARIOS, Scenario, count, stored

from rwq.conformance.redis_server import RedisServer


@pytest.fixture(scope="module")
def fresh_server() -> Iterator[RedisServer]:
    """A redis-server of this module's own: nothing else runs on it while MONITOR counts."""
    with RedisServer() as server:
        yield server


def test_every_scenario_has_a_stored_count() -> None:
    assert sorted(stored()) == sorted(scenario.name for scenario in SCENARIOS)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[scenario.name for scenario in SCENARIOS])
def test_script_runs_its_stored_command_count(fresh_server: RedisServer, scenario: Scenario) -> None:
    counted = count(fresh_server, scenario)
    total, row = counted.total(), stored()[scenario.name]
    assert row["script"] == scenario.script
    by_command = dict(sorted(counted.items()))
    assert total <= row["commands"], (
        f"{scenario.script} now runs {total} Redis commands on path {scenario.name}, more than the "
        f"{row['commands']} stored in lua/command-counts.json: {by_command} against {row['by_command']}. "
        "Find the command that came back, or store the new count (python -m bench.counts --write) "
        "and say in the review why it is needed"
    )
    assert total == row["commands"], (
        f"{scenario.script} runs {total} Redis commands on path {scenario.name}, fewer than the "
        f"{row['commands']} stored: store the new count (python -m bench.counts --write)"
    )
