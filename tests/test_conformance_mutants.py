"""The mutation audit's ledger (conformance/audit/) agrees with SPEC, the cases and the mutants.

Running the mutants is ``make mutants`` (tools/mutants.py), a step of ``make test``; these tests
check the ledger itself and that the audit tool notices a ledger that lies.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rwq.conformance import data

sys.path.insert(0, str(data.REPO / "tools"))
import mutants


def test_the_ledger_covers_every_requirement_and_every_mutant() -> None:
    ledger = mutants.load_ledger()
    assert mutants.ledger_problems(ledger) == []
    assert len(ledger.lines) >= 60
    assert len({line.group for line in ledger.lines}) >= 20


def test_every_mutant_loads_and_a_stale_script_edit_is_reported(tmp_path: Path) -> None:
    assert mutants.load_problems() == []
    main = '\nif __name__ == "__main__":\n    raise SystemExit(1)\n'
    (tmp_path / "stale_edit.py").write_text(
        'from _script import edit\nedit("add", "a line add.lua has not", "")' + main
    )
    (tmp_path / "fine.py").write_text(
        'from _script import edit\nedit("add", "existing == 0", "existing")' + main
    )
    (tmp_path / "serves_at_import.py").write_text("raise SystemExit(1)\n")
    problems = sorted(mutants.load_problems(tmp_path))
    assert len(problems) == 2
    assert problems[0].startswith("mutant serves_at_import serves at import")
    assert problems[1].startswith("mutant stale_edit does not load: ValueError: add.lua has no")


def _write(directory: Path, requirements: dict[str, object]) -> None:
    document = {"format": 1, "area": "test", "requirements": requirements}
    (directory / "test.json").write_text(json.dumps(document))


def _line(**changes: str) -> dict[str, str]:
    line = {
        "mutant": "lifo",
        "class": "logic",
        "port": "pops the queue from the left",
        "case": "lease/fifo/oldest-first@subject,subject,subject",
        "kind": "mismatch",
    }
    return {**line, **changes}


def test_a_missing_case_an_uncited_requirement_and_a_stray_mutant_are_reported(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "RWQ-LEASE-001": {"wrong": [_line(case="lease/fifo/no-such-case")]},
            "RWQ-ADD-001": {"wrong": [_line(mutant="no_such_mutant")]},
        },
    )
    problems = mutants.ledger_problems(mutants.load_ledger(tmp_path))
    assert "lifo: case lease/fifo/no-such-case does not exist" in problems
    assert "no_such_mutant: case lease/fifo/oldest-first does not cite RWQ-ADD-001" in problems
    assert "mutant no_such_mutant has no file in conformance/mutants" in problems
    assert "RWQ-LEASE-002 (MUST) is not in the audit" in problems
    assert "conformance/mutants/ghosts.py is in no ledger line" in problems


def test_a_requirement_audited_twice_or_a_line_without_its_case_is_refused(tmp_path: Path) -> None:
    _write(tmp_path, {"RWQ-LEASE-001": {"wrong": [{"mutant": "lifo", "class": "logic"}]}})
    with pytest.raises(ValueError, match="case"):
        mutants.load_ledger(tmp_path)
    _write(tmp_path, {"RWQ-LEASE-001": {"wrong": [_line()]}})
    (tmp_path / "again.json").write_text(
        json.dumps(
            {
                "format": 1,
                "area": "matrix",
                "requirements": {"RWQ-LEASE-001": {"wrong": [_line(mutant="fifo")]}},
            }
        )
    )
    assert [line.mutant for line in mutants.load_ledger(tmp_path).lines] == ["fifo", "lifo"]
    _write(tmp_path, {"RWQ-LEASE-001": {"no_mutant": "a reason that is long enough"}})
    with pytest.raises(ValueError, match="lines and a no_mutant reason"):
        mutants.load_ledger(tmp_path)


def test_a_mutant_that_passes_one_of_its_also_cases_is_not_caught() -> None:
    line = mutants.Line("RWQ-LEASE-001", "lifo", "logic", "pops left", "a/b", "mismatch", also=("a/c",))
    failed = {"id": "a/b", "status": "fail", "failure": {"kind": "mismatch"}}
    passed = {"id": "a/c", "status": "pass"}
    assert mutants.verdict(line, mutants.Run(1, {"cases": [failed, passed]}, "", 1.0)) == "a/c: pass"
    caught = {"id": "a/c", "status": "fail", "failure": {"kind": "wire"}}
    assert mutants.verdict(line, mutants.Run(1, {"cases": [failed, caught]}, "", 1.0)) is None
    assert mutants.verdict(line, mutants.Run(0, {"cases": [failed, caught]}, "", 1.0)) is not None
    permuted = [{**caught, "id": "a/c@ref,subject", "status": "pass"}, {**caught, "id": "a/c@subject,ref"}]
    assert mutants.verdict(line, mutants.Run(1, {"cases": [failed, *permuted]}, "", 1.0)) is None
