"""docs/porting.md stays true to the repository without running its commands (they run the
conformance suite several times, about a minute in all, checked by hand when the page changes):
the adapters' line counts in its table, the mutants it runs and the cases it names exist."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "porting.md").read_text()


def test_the_adapter_line_counts_are_the_files() -> None:
    rows = re.findall(r"^\| \[([^\]]+)\]\([^)]+\) \| (\d+) \|", DOC, re.M)
    assert len(rows) == 3, rows
    for path, lines in rows:
        assert len((ROOT / path).read_text().splitlines()) == int(lines), path


def test_the_mutants_and_cases_it_names_exist() -> None:
    ids = {
        case["id"]
        for path in (ROOT / "conformance" / "cases").glob("*.json")
        for case in json.loads(path.read_text())["cases"]
    }
    named = set(re.findall(r"\b((?:add|resilience)/[a-z0-9-]+/[a-z0-9-]+)\b", DOC))
    assert named
    assert named <= ids, named - ids
    for mutant in re.findall(r"conformance/mutants/([a-z_]+\.py)", DOC):
        assert (ROOT / "conformance" / "mutants" / mutant).is_file(), mutant
    for group in re.findall(r'-k "([a-z-]+)/\*\*"', DOC):
        assert any(case.startswith(f"{group}/") for case in ids), group
