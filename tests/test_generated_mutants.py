"""The generated mutants' ledger (conformance/audit/generated/) is fresh and every survivor judged.

Running the mutants is ``make mutants-generated`` (tools/generated_mutants.py); these tests run no
suite: they regenerate the mutant list from the current sources and compare it with the ledger.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rwq.conformance import data

sys.path.insert(0, str(data.REPO / "tools"))
import generated_mutants
import gomutants
import pymutate


def test_the_ledger_lists_every_generated_mutant_and_judges_every_survivor() -> None:
    assert generated_mutants.problems() == []


def test_ids_are_unique_and_stable() -> None:
    first = [mutant.id for mutant in pymutate.generate()]
    assert len(first) == len(set(first))
    assert first == [mutant.id for mutant in pymutate.generate()]
    assert {mutant.split("/")[3] for mutant in first} == {
        "num",
        "cmp",
        "while",
        "arg-drop",
        "arg-swap",
        "flag",
        "error",
        "bound",
    }


def test_every_protocol_module_is_mutated_or_skipped_with_a_reason() -> None:
    modules = {path.name for path in pymutate.PROTOCOL.glob("*.py")}
    assert modules == set(pymutate.FILES) | set(pymutate.SKIPPED)
    assert not set(pymutate.FILES) & set(pymutate.SKIPPED)


def test_a_mutant_changes_its_module_in_memory_only() -> None:
    mutant = next(
        m for m in pymutate.generate(("validation.py",)) if m.original == "1000" and m.mutated == "1001"
    )
    source = (pymutate.PROTOCOL / "validation.py").read_text()
    name, tree = pymutate.mutated_tree(mutant.id)
    assert name == "validation.py"
    assert "MAX_BATCH = 1001" in ast.unparse(tree)
    assert (pymutate.PROTOCOL / "validation.py").read_text() == source


def test_an_unjudged_survivor_and_a_stale_ledger_are_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = json.loads(generated_mutants.LEDGER.read_text())
    killed = next(m for m in ledger["mutants"] if m["id"].startswith("py/") and m["result"] == "killed")
    killed.update(result="survived")
    ledger["mutants"].append({**killed, "id": "py/validation.py/gone/num/00000000"})
    monkeypatch.setattr(generated_mutants, "LEDGER", tmp_path / "ledger.json")
    generated_mutants.LEDGER.write_text(json.dumps(ledger))
    found = generated_mutants.problems(("py",))
    assert f"{killed['id']}: survived without a verdict" in "\n".join(found)
    assert "py/validation.py/gone/num/00000000: in the ledger but no longer generated" in found


def test_deferring_unjudged_survivors_keeps_every_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--defer-unjudged turns only survivors without a verdict into pending, not judged ones."""
    ledger = json.loads(generated_mutants.LEDGER.read_text())
    verdicts = generated_mutants.load_verdicts()
    judged = next(
        m
        for m in ledger["mutants"]
        if m["id"].startswith("py/") and m["result"] == "survived" and m["id"] in verdicts
    )
    fresh = next(m for m in ledger["mutants"] if m["id"].startswith("py/") and m["result"] == "killed")
    fresh.update(result="survived")
    judged.update(cases=1, covering=50)  # its fast-mode run stopped at a case cap
    monkeypatch.setattr(generated_mutants, "LEDGER", tmp_path / "ledger.json")
    generated_mutants.LEDGER.write_text(json.dumps(ledger))
    generated_mutants.main(["--lang", "py", "--defer-unjudged", "later"])
    after = generated_mutants.load_ledger()
    assert after[fresh["id"]]["result"] == "pending"
    assert after[judged["id"]]["result"] == "survived"


TINY = {
    "go.mod": "module example.com/tiny\n\ngo 1.21\n",
    "tiny.go": 'package tiny\n\nimport "strings"\n\nfunc Limit() int { return 10 }\n\n'
    'func Word() string { return strings.Repeat("ab", 2) }\n',
    "cmd/tiny/main.go": 'package main\n\nimport (\n\t"fmt"\n\n\t"example.com/tiny"\n)\n\n'
    "func main() { fmt.Println(tiny.Limit(), tiny.Word()) }\n",
}


@pytest.mark.skipif(shutil.which("go") is None, reason="needs the Go toolchain")
def test_go_schemata_switch_mutants_by_environment_and_drop_those_that_do_not_compile(
    tmp_path: Path,
) -> None:
    src = tmp_path / "tiny"
    for name, text in TINY.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    listed = [json.loads(line) for line in generated_mutants.gomutate("list", str(src)).splitlines()]
    by_change = {(m["function"], m["operator"], m["mutated"]): m["id"] for m in listed}
    program = tmp_path / "tiny-program"
    switched, stillborn = gomutants.build_schemata(
        src, program, set(), package="example.com/tiny", main="./cmd/tiny"
    )
    # dropping or swapping an argument of strings.Repeat does not compile: only those copies
    assert stillborn == {m["id"] for m in listed if m["operator"] in ("arg-drop", "arg-swap")}
    assert set(switched) == {m["id"] for m in listed} - stillborn

    def run(mutant: str | None) -> str:
        number = str(switched[mutant]) if mutant else ""
        env = {**os.environ, gomutants.SCHEMATA_ENV: number}
        return subprocess.run([str(program)], env=env, capture_output=True, text=True, check=True).stdout

    assert run(None) == "10 abab\n"
    assert run(by_change["Limit", "num", "11"]) == "11 abab\n"
    assert run(by_change["Word", "num", "3"]) == "10 ababab\n"
    assert (src / ".orig" / "tiny.go").read_text() == TINY["tiny.go"]
