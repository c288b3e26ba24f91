"""The coverage matrix (conformance/coverage/): fresh, valid, every cell with a case or a
reasoned waiver, and cell membership derived from what the cases do."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rwq.conformance.coverage import derive, matrix
from rwq.conformance.data import schema_errors

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from coverage_matrix import MATRIX, WAIVERS, build  # noqa: E402


def test_matrix_is_fresh_complete_and_valid() -> None:
    text, problems, _summary = build()
    assert problems == []
    assert MATRIX.read_text() == text, "stale: run python tools/coverage_matrix.py --write"
    assert schema_errors("coverage-matrix", json.loads(text)) == []
    assert schema_errors("coverage-matrix", json.loads(WAIVERS.read_text()), "/$defs/manual") == []


def _doc(*steps: dict[str, Any], options: dict[str, Any] | None = None) -> dict[str, Any]:
    sessions = {"w": {"options": options or {}}}
    return {"defaults": {"sessions": sessions}, "cases": [{"id": "g/c", "steps": list(steps)}]}


def test_cells_come_from_methods_values_and_expectations() -> None:
    refused = {"expect": {"error": "INVALID_ARGUMENT"}}
    cells = derive(
        [
            _doc(
                {"call": "lease", "session": "w", "args": {"lease_ms": 1.5}, **refused},
                {"call": "lease", "session": "w", "args": {"lease_ms": True}, **refused},
                {"call": "renew", "session": "w", "args": {"lease_ms": 1}, **refused},
                {"call": "lease_many", "session": "w", "args": {"count": 1001, "lease_ms": 5}, **refused},
                {"call": "lease", "session": "w", "args": {"lease_ms": 1500}},
                {
                    "call": "complete",
                    "session": "w",
                    "args": {"id": {"utf8": "a"}},
                    "expect": {"error": "LEASE_LOST"},
                },
                options={"flat_in_flight": True},
            )
        ]
    )
    assert cells["boundaries/lease.lease_ms/1.5"] == {"g/c"}
    assert cells["boundaries/lease.lease_ms/true"] == {"g/c"}
    assert cells["boundaries/lease.lease_ms/min"] == set(), "True is not the integer 1"
    assert cells["boundaries/renew.lease_ms/min"] == set(), "a refused minimum is no minimum"
    assert cells["boundaries/lease_many.count/above-max"] == {"g/c"}
    assert cells["errors/INVALID_ARGUMENT/batch-over-1000"] == {"g/c"}
    assert cells["boundaries/lease.lease_ms/1500"] == set(), "a unit teller needs a case that looks at time"
    assert cells["settings/flat_in_flight/single"] == {"g/c"}
    assert cells["settings/flat_in_flight/batch-over-1000"] == set(), "a refused call takes no path"
    assert cells["errors/LEASE_LOST/single"] == {"g/c"}


def test_waivers_and_listed_cases_are_checked() -> None:
    doc = _doc({"call": "lease", "session": "w", "args": {"lease_ms": 1000}})
    manual = {
        "waivers": [
            {
                "reason": "Not applicable: a reason long enough",
                "cells": ["settings/flat_in_flight/single", "errors/*"],
            }
        ],
        "listed": [{"cell": "settings/delay/single", "method": "add", "cases": ["g/c", "g/none"]}],
    }
    _document, problems = matrix([doc], manual)
    assert "listed: case g/c of settings/delay/single does not exist or never calls add" in problems
    assert "listed: case g/none of settings/delay/single does not exist or never calls add" in problems
    assert not any("errors/" in p for p in problems)
    assert "empty cell without a waiver: settings/delay/single" in problems
    flat = _doc(
        {"call": "lease", "session": "w", "args": {"lease_ms": 1000}}, options={"flat_in_flight": True}
    )
    _document, problems = matrix([flat], manual)
    assert any(p.startswith("waiver for settings/flat_in_flight/single, which has cases") for p in problems)
