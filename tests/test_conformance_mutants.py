"""The suite catches broken implementations: each mutant adapter (the reference adapter with one
bug, ``rwq.conformance.mutants``) fails a named case, for the named reason, while the reference
adapter passes that very case.

All runs go in parallel subprocesses, each on its own managed Redis, each filtered with ``-k`` to
the permutations of its named case; the reference runs all the named cases.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rwq.conformance import data
from rwq.conformance.runner import EXIT_CONFORMS, EXIT_NONCONFORMANT

pytestmark = pytest.mark.timeout(300)  # the shared runs happen in the first test's set-up

MUTANTS_DIR = data.REPO / "python" / "rwq" / "conformance" / "mutants"
PYTHON = shlex.quote(sys.executable)
FAILED = {"fail", "error", "timeout", "crash"}


@dataclass(frozen=True)
class Mutant:
    """A broken adapter, the case that must catch it and the failure kind it must report."""

    module: str
    case: str
    kind: str
    timeout_multiplier: float = 1.0

    @property
    def adapter(self) -> str:
        return f"{PYTHON} -m rwq.conformance.mutants.{self.module}"


MUTANTS = (
    Mutant("lifo", "lease/fifo/oldest-first@subject,subject,subject", "mismatch"),
    Mutant("lease_seconds", "lease/ttl/exactly-lease-ms", "mismatch"),
    Mutant(
        "complete_always_true",
        "complete/first-completer/only-first-gets-true@subject,ref,subject",
        "mismatch",
    ),
    Mutant("ghosts", "lease/ghost/skipped-and-dropped", "mismatch"),
    Mutant("cleaner_ignores_leases", "clean/light/keeps-live-leases@subject,ref", "mismatch"),
    Mutant("legacy_lease_ignored", "clean/light/legacy-lease-is-live", "mismatch"),
    # The frozen server clock never reaches a deadline kept on the client's clock: the call hangs.
    Mutant("client_clock", "lease/blocking/timeout-returns-nothing", "timeout", timeout_multiplier=0.3),
    Mutant("evalsha_only", "resilience/noscript/recovers-after-script-flush", "mismatch"),
    Mutant("eval_always", "counts/values/empty-queue", "wire"),
    Mutant("complete_keeps_lease", "complete/effects/removes-every-key", "mismatch"),
    Mutant("add_overwrites", "add/idempotent/existing-id-left-untouched", "mismatch"),
    Mutant("binary_mangled", "add/payload/binary-bytes-exact@subject,ref", "mismatch"),
    Mutant("renew_no_token", "renew/lost/taken-over@ref,subject,ref", "mismatch"),
    Mutant("release_to_front", "release/requeue/back-of-queue@subject,subject,subject", "mismatch"),
    Mutant("require_lease_ignored", "complete/require-lease/expired-lease-lost", "mismatch"),
    Mutant("outside_namespace", "add/single/creates-item", "wire"),
    Mutant("keys_scan", "clean/deep/requeues-orphan", "wire"),
    Mutant("split_complete_and_lease", "complete-and-lease/many/fewer-ready-than-count", "wire"),
)
REFERENCE = "reference"


@dataclass(frozen=True)
class Result:
    """One run: exit code, report.json and the terminal output."""

    code: int
    report: dict[str, Any]
    output: str

    def case(self, case_id: str) -> dict[str, Any]:
        found: list[dict[str, Any]] = [c for c in self.report["cases"] if c["id"] == case_id]
        assert found, f"{case_id} did not run:\n{self.output[-3000:]}"
        return found[0]


def conformance(adapter: str, out: Path, options: list[str]) -> Result:
    argv = [sys.executable, "-m", "rwq.cli", "conformance", "--adapter", adapter, "--out", str(out), *options]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=240, check=False)
    report = json.loads((out / "report.json").read_text()) if (out / "report.json").exists() else {}
    return Result(done.returncode, report, done.stdout + done.stderr)


def named_cases(directory: Path) -> Path:
    """A case directory with only the cases the table names (all their permutations)."""
    wanted = {m.case.split("@")[0] for m in MUTANTS}
    for path in sorted(data.cases_dir().glob("*.json")):
        document = json.loads(path.read_text())
        document["cases"] = [case for case in document["cases"] if case["id"] in wanted]
        if document["cases"]:
            (directory / path.name).write_text(json.dumps(document))
    return directory


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Result]:
    """The reference's run over the named cases and every mutant's over its own, four at a time."""
    base = tmp_path_factory.mktemp("mutants")
    cases = named_cases(tmp_path_factory.mktemp("cases"))
    jobs = {
        REFERENCE: (
            f"{PYTHON} -m rwq.conformance.reference_adapter",
            base / REFERENCE,
            ["--cases", str(cases)],
        )
    }
    for m in MUTANTS:
        options = ["-k", m.case.split("@")[0], "--timeout-multiplier", str(m.timeout_multiplier)]
        jobs[m.module] = (m.adapter, base / m.module, options)
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {name: pool.submit(conformance, *job) for name, job in jobs.items()}
        return {name: future.result() for name, future in futures.items()}


def test_every_mutant_is_in_the_table() -> None:
    modules = {path.stem for path in MUTANTS_DIR.glob("*.py") if path.stem != "__init__"}
    assert modules == {m.module for m in MUTANTS}
    assert len(MUTANTS) >= 12


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.module for m in MUTANTS])
def test_mutant_is_caught(results: dict[str, Result], mutant: Mutant) -> None:
    result = results[mutant.module]
    assert result.code == EXIT_NONCONFORMANT, result.output[-3000:]
    assert result.report["scripts_check"] == {"ok": True, "problems": []}
    record = result.case(mutant.case)
    assert record["status"] in FAILED, record
    assert record["failure"]["kind"] == mutant.kind, record["failure"]


def test_reference_passes_the_mutants_cases(results: dict[str, Result]) -> None:
    reference = results[REFERENCE]
    assert reference.code == EXIT_CONFORMS, reference.output[-3000:]
    assert {m.case: reference.case(m.case)["status"] for m in MUTANTS} == {m.case: "pass" for m in MUTANTS}
