"""Interop permutations: cases with ``impl: any`` sessions run once per assignment of those
sessions to the subject and the reference adapter, each reported under its own id."""

from __future__ import annotations

import io
import json
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

from rich.console import Console

from rwq.conformance.cases import Case, SessionSpec
from rwq.conformance.pool import REFERENCE, SUBJECT, assignments, permutations
from rwq.conformance.runner import EXIT_CONFORMS, EXIT_NONCONFORMANT, RunConfig, run

S, R = SUBJECT, REFERENCE


def case(**impls: str) -> Case:
    sessions = {name: SessionSpec(name, impl=impl) for name, impl in impls.items()}
    return Case("g/x", "t", "g", "g.json", ("RWQ-ADD-001",), ("core",), (), sessions, (), ("g/old",))


def test_assignments() -> None:
    assert assignments(1) == [(S,), (R,)]
    assert assignments(2) == [(S, S), (S, R), (R, S)]
    assert assignments(3) == [(S, S, S), (S, R, S), (R, S, R)]


def test_permutations_ids_sessions_and_aliases() -> None:
    permuted = permutations(case(a="any", b="subject", c="any"))
    assert [p.id for p in permuted] == ["g/x@subject,subject", "g/x@subject,ref", "g/x@ref,subject"]
    assert [[s.impl for s in p.sessions.values()] for p in permuted] == [[S, S, S], [S, S, R], [R, S, S]]
    assert permuted[1].aliases == ("g/old@subject,ref", "g/x", "g/old")


def test_permutations_keep_the_subject_in_the_case() -> None:
    assert [p.id for p in permutations(case(a="any", b="reference"))] == ["g/x@subject"]
    plain = case(a="subject", b="reference")
    assert permutations(plain) == [plain]


def no_add_adapter(tmp_path: Path) -> str:
    """The reference adapter, except that its add_many fails: only the reference can produce."""
    path = tmp_path / "no_add.py"
    path.write_text(
        textwrap.dedent(
            """
            from rwq.conformance import reference_adapter as ra


            class Variant(ra.Adapter):
                def call(self, args):
                    if args["method"] == "add_many":
                        raise ra.Unsupported("add_many")
                    return super().call(args)


            ra.Adapter = Variant
            ra.main()
            """
        )
    )
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def conformance(tmp_path: Path, adapter: str, **options: Any) -> tuple[int, dict[str, str]]:
    out = tmp_path / f"out-{len(list(tmp_path.glob('out-*')))}"
    config = RunConfig(adapter=adapter, out=out, console=Console(file=io.StringIO()), **options)
    code = run(config)
    report = json.loads((out / "report.json").read_text())
    return code, {record["id"]: record["status"] for record in report["cases"]}


def test_sessions_run_in_the_adapter_their_permutation_names(tmp_path: Path) -> None:
    code, statuses = conformance(
        tmp_path, no_add_adapter(tmp_path), pattern="interop/producer/add-then-lease"
    )
    assert code == EXIT_NONCONFORMANT
    assert statuses == {
        "interop/producer/add-then-lease@subject,subject": "fail",
        "interop/producer/add-then-lease@subject,ref": "fail",
        "interop/producer/add-then-lease@ref,subject": "pass",
    }


def test_known_failures_name_one_permutation_or_all(tmp_path: Path) -> None:
    known = tmp_path / "known.toml"
    known.write_text(
        'format = 1\n[[fail]]\ncase = "interop/producer/add-then-lease@subject,*"\nreason = "r"\n'
    )
    options = {"pattern": "interop/producer", "known_failures": known}
    code, statuses = conformance(tmp_path, no_add_adapter(tmp_path), **options)
    assert code == EXIT_CONFORMS
    assert sorted(statuses.values()) == ["pass", "xfail", "xfail"]
    # An old id, kept as an alias of the merged case, names all of its permutations.
    known.write_text(
        'format = 1\n[[fail]]\ncase = "interop/producer/reference-adds-subject-consumes"\nreason = "r"\n'
    )
    code, statuses = conformance(tmp_path, no_add_adapter(tmp_path), **options)
    assert code == EXIT_NONCONFORMANT
    assert sorted(statuses.values()) == ["xfail", "xfail", "xpass"]
