"""``make bench`` keeps its history (issue #22): each run is compared with the last stored run of
the same machine kind, and a ratio that got worse by more than 10 % is flagged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench import history


def result(started_at: str, drain: float, wake: float) -> dict[str, Any]:
    """A result document with two measurements: one where higher is better, one where lower is."""
    return {
        "environment": {"started_at": started_at},
        "measurements": [
            {"id": "drain_one", "title": "drain", "better": "higher", "ratio_to_raw": {"rwq": drain}},
            {"id": "wake_median", "title": "wake", "better": "lower", "ratio_to_raw": {"rwq": wake}},
        ],
    }


def test_a_run_is_compared_with_the_last_of_its_machine_kind(tmp_path: Path) -> None:
    stored, earlier, worse = history.record(result("t1", 1.50, 1.00), False, "20261128-100000", tmp_path)
    assert (earlier, worse) == (None, [])
    assert stored.parent.name == history.machine_kind(quick=False)
    # A quick run has a kind of its own: nothing to compare with yet.
    assert history.record(result("t2", 0.10, 9.0), True, "20261128-100500", tmp_path)[1:] == (None, [])
    # 5 % worse on both: not flagged.
    _, earlier, worse = history.record(result("t3", 1.43, 1.05), False, "20261128-101000", tmp_path)
    assert earlier == stored
    assert worse == []
    # Compared with the last run (t3), not the first: the drain fell 16 %, the wake-up rose 15 %.
    _, earlier, worse = history.record(result("t4", 1.20, 1.21), False, "20261128-102000", tmp_path)
    assert earlier is not None
    assert earlier.name == "20261128-101000.json"
    assert [(r.measurement, r.peer, r.before, r.now) for r in worse] == [
        ("drain_one", "rwq", 1.43, 1.20),
        ("wake_median", "rwq", 1.05, 1.21),
    ]
    assert round(worse[0].change, 2) == -0.16


def test_better_ratios_and_new_measurements_are_not_flagged() -> None:
    before = history.summary(result("t1", 1.0, 1.0))
    now = history.summary(result("t2", 2.0, 0.5))
    now["ratios"]["new"] = {"title": "new", "better": "higher", "ratio_to_raw": {"rwq": 0.1}}
    assert history.regressions(before, now) == []
