"""The mutation audit: run every mutant of the ledger against the case that must catch it.

The ledger is ``conformance/audit/*.json`` (``schemas/conformance-audit.schema.json``): for each
SPEC requirement, the wrong implementations a real port could ship, each a mutant adapter in
``conformance/mutants/<name>.py`` (the reference adapter with one behaviour changed) and the case
that fails on it. This tool checks the ledger against SPEC and the case corpus, runs the reference
over every named case (each must pass), runs each mutant over its own case (each must fail, with
the named failure kind), prints ``caught K/N`` and exits 1 below 100 %. Cases that need Redis
Cluster (group ``cluster``) run with ``--cluster``, the reference over them in a run of its own.

    python tools/mutants.py [--jobs N] [--only NAME ...] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rwq.conformance import data, reference_adapter
from rwq.conformance.cases import load_cases
from rwq.protocol import scripts

ROOT = Path(__file__).resolve().parents[1]
AUDIT_DIR = ROOT / "conformance" / "audit"
MUTANTS_DIR = ROOT / "conformance" / "mutants"
GATED_LEVELS = {"MUST", "MUST NOT", "SHOULD", "SHOULD NOT"}
FAILED = {"fail", "error", "timeout", "crash", "warn"}  # warn: a case of SHOULDs caught it (exit 0)
REFERENCE = "reference"
REFERENCE_CLUSTER = "reference-cluster"


@dataclass(frozen=True)
class Line:
    """One ledger line: a requirement, the wrong port (a mutant) and the case that catches it."""

    requirement: str
    mutant: str
    klass: str
    port: str
    case: str
    kind: str
    timeout_multiplier: float = 1.0
    also: tuple[str, ...] = ()
    or_kinds: tuple[str, ...] = ()

    @property
    def case_id(self) -> str:
        """The case id without its interop permutation."""
        return self.case.split("@")[0]

    @property
    def case_ids(self) -> tuple[str, ...]:
        """Every case the mutant must fail: its own and those of ``also``, without permutations."""
        return tuple(case.split("@")[0] for case in (self.case, *self.also))

    @property
    def group(self) -> str:
        """The requirement's group (``LEASE`` for ``RWQ-LEASE-004``)."""
        return self.requirement.split("-")[1]


@dataclass(frozen=True)
class Ledger:
    """The whole audit: its lines and the requirements it waives with a reason."""

    lines: tuple[Line, ...]
    no_mutant: dict[str, str]


def load_ledger(directory: Path = AUDIT_DIR) -> Ledger:
    """Every ledger file, schema-checked. A requirement may have lines in several files (an area's
    own, and the coverage matrix's, ``matrix.json``), but a ``no_mutant`` reason only where no
    file has lines for it, and only once."""
    lines: list[Line] = []
    no_mutant: dict[str, str] = {}
    seen: set[str] = set()
    for path in sorted(directory.glob("*.json")):
        document = json.loads(path.read_text())
        errors = data.schema_errors("conformance-audit", document)
        if errors:
            raise ValueError(f"{path.name}: " + "; ".join(errors))
        for requirement, entry in document["requirements"].items():
            if requirement in no_mutant or (requirement in seen and "no_mutant" in entry):
                raise ValueError(
                    f"{path.name}: {requirement} has lines and a no_mutant reason, or two reasons"
                )
            seen.add(requirement)
            if "no_mutant" in entry:
                no_mutant[requirement] = entry["no_mutant"]
            for wrong in entry.get("wrong", []):
                lines.append(
                    Line(
                        requirement,
                        wrong["mutant"],
                        wrong["class"],
                        wrong["port"],
                        wrong["case"],
                        wrong["kind"],
                        float(wrong.get("timeout_multiplier", 1.0)),
                        tuple(wrong.get("also", ())),
                        tuple(wrong.get("or_kinds", ())),
                    )
                )
    return Ledger(tuple(lines), no_mutant)


def ledger_problems(ledger: Ledger) -> list[str]:
    """What makes the ledger inconsistent with SPEC, the case corpus or the mutant files.

    A line's case must cite its requirement, except for a ``wire`` failure: the wire rules apply to
    every case, so any case can name such a mutant."""
    problems: list[str] = []
    spec = {
        r["id"]: r
        for r in json.loads((ROOT / "conformance" / "requirements.json").read_text())["requirements"]
    }
    audited = {line.requirement for line in ledger.lines} | set(ledger.no_mutant)
    for requirement_id, requirement in spec.items():
        if requirement["level"] in GATED_LEVELS and requirement_id not in audited:
            problems.append(f"{requirement_id} ({requirement['level']}) is not in the audit")
    problems += [f"{rid} is audited but not in SPEC" for rid in sorted(audited - set(spec))]
    cases = {case.id: case for case in load_cases(data.cases_dir())}
    for line in ledger.lines:
        case = cases.get(line.case_id)
        if case is None:
            problems.append(f"{line.mutant}: case {line.case_id} does not exist")
        elif line.kind != "wire" and line.requirement not in case.requirements:
            problems.append(f"{line.mutant}: case {line.case_id} does not cite {line.requirement}")
        missing = [also for also in line.case_ids[1:] if also not in cases]
        problems += [f"{line.mutant}: case {also} does not exist" for also in missing]
    files = {path.stem for path in MUTANTS_DIR.glob("*.py") if not path.stem.startswith("_")}
    named = Counter(line.mutant for line in ledger.lines)
    problems += [f"mutant {name} is in the ledger {n} times" for name, n in sorted(named.items()) if n > 1]
    problems += [f"mutant {name} has no file in conformance/mutants" for name in sorted(set(named) - files)]
    problems += [f"conformance/mutants/{name}.py is in no ledger line" for name in sorted(files - set(named))]
    return problems


def load_problems(directory: Path = MUTANTS_DIR) -> list[str]:
    """The mutants that fail to load: a script edit whose text a canonical script no longer holds,
    or any other error at import. Such a mutant cannot start, so the audit would report it not
    caught, or worse; checked in a subprocess, as ``--load`` (every mutant in well under a second)."""
    command = [sys.executable, str(Path(__file__).resolve()), "--load", str(directory)]
    done = subprocess.run(
        command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, check=False
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return [f"loading the mutants failed: {done.stderr.strip()[-500:]}"]
    return [str(problem) for problem in json.loads(lines[-1])]


def _load_each(directory: Path) -> list[str]:
    """Import every mutant module as it would start, without serving (see load_problems)."""
    sys.path[:0] = [str(directory), str(MUTANTS_DIR)]
    assert reference_adapter  # loaded once, before the loop, as every mutant loads it
    loaded = set(sys.modules)
    problems = []
    for path in sorted(directory.glob("[!_]*.py")):
        if '\nif __name__ == "__main__":' not in path.read_text():
            problems.append(f"mutant {path.stem} serves at import: its serve() call is not under __main__")
            continue
        for module in set(sys.modules) - loaded:  # _script, _mutant and friends load afresh
            del sys.modules[module]
        scripts.registry.cache_clear()
        try:
            runpy.run_path(str(path), run_name="rwq_mutant_load")
        except Exception as error:  # any error at import is the problem reported
            problems.append(f"mutant {path.stem} does not load: {type(error).__name__}: {error}")
    return problems


@dataclass(frozen=True)
class Run:
    """One conformance run: exit code, report.json and the terminal output."""

    code: int
    report: dict[str, Any]
    output: str
    seconds: float

    def status(self, case: str) -> tuple[str, str | None]:
        """The status of ``case`` and its failure kind. A case id without a permutation stands for
        all its permutations: the first that did not pass, else ``pass``."""
        records = [
            record
            for record in self.report.get("cases", [])
            if record["id"] == case or ("@" not in case and record["id"].startswith(case + "@"))
        ]
        for record in sorted(records, key=lambda record: record["status"] == "pass"):
            failure = record.get("failure") or {}
            return record["status"], failure.get("kind")
        return "did-not-run", None


def conformance(adapter: str, out: Path, options: list[str]) -> Run:
    """``rwq conformance`` in a subprocess, on a Redis of its own."""
    argv = [sys.executable, "-m", "rwq.cli", "conformance", "--adapter", adapter, "--out", str(out), *options]
    started = time.monotonic()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(MUTANTS_DIR), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False, env=env)
    report_path = out / "report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    return Run(done.returncode, report, done.stdout + done.stderr, time.monotonic() - started)


def cluster_cases() -> set[str]:
    """The ids of the cases that run only against Redis Cluster (``rwq conformance --cluster``)."""
    return {case.id for case in load_cases(data.cases_dir()) if "cluster" in case.needs}


def named_cases(lines: tuple[Line, ...], directory: Path, *, cluster: bool = False) -> Path | None:
    """A case directory holding only the cases the lines name (with all their permutations), the
    cluster cases or the others; None when there are none."""
    on_cluster = cluster_cases()
    wanted = {case for line in lines for case in line.case_ids if (case in on_cluster) == cluster}
    if not wanted:
        return None
    for path in sorted(data.cases_dir().glob("*.json")):
        document = json.loads(path.read_text())
        document["cases"] = [case for case in document["cases"] if case["id"] in wanted]
        if document["cases"]:
            (directory / path.name).write_text(json.dumps(document))
    return directory


def mutant_adapter(name: str) -> str:
    """The command that starts the mutant ``name``."""
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(MUTANTS_DIR / f'{name}.py'))}"


def verdict(line: Line, run: Run) -> str | None:
    """Why the mutant was not caught as the ledger says, or None when it was."""
    status, kind = run.status(line.case)
    if status == "warn":  # a case of SHOULDs: it warns, and the run still conforms (exit code 0)
        if run.code != 0:
            return f"exit code {run.code}, not 0 (a warning never fails the run)"
    elif run.code != 1:
        return f"exit code {run.code}, not 1 (non-conformant)"
    if status not in FAILED:
        return f"{line.case}: {status}"
    if kind != line.kind and kind not in line.or_kinds:
        return f"{line.case}: failed with {kind}, not {line.kind}"
    for also in line.also:
        if run.status(also)[0] not in FAILED:
            return f"{also}: {run.status(also)[0]}"
    return None


def main(argv: list[str]) -> int:
    """Run the audit; 0 when the reference passes every named case and every mutant is caught."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=max(2, 2 * (os.cpu_count() or 1)))
    parser.add_argument(
        "--only",
        nargs="*",
        default=None,
        help="mutant names to run (default: all); ledger problems only warn",
    )
    parser.add_argument("--out", type=Path, default=None, help="keep every run's reports here")
    parser.add_argument("--check", action="store_true", help="check the ledger only, run nothing")
    parser.add_argument(
        "--load", type=Path, metavar="DIR", help="import every mutant of DIR; print those that fail (JSON)"
    )
    args = parser.parse_args(argv)
    if args.load:
        print(json.dumps(_load_each(args.load)))
        return 0

    ledger = load_ledger()
    problems = ledger_problems(ledger) + load_problems()
    for problem in problems:
        print(f"ledger: {problem}", file=sys.stderr)
    if problems and args.only is None:
        return 1
    groups = Counter(line.group for line in ledger.lines)
    print(
        f"ledger: {len({line.requirement for line in ledger.lines}) + len(ledger.no_mutant)} requirements, "
        f"{len(ledger.lines)} wrong implementations, {len(ledger.no_mutant)} without a mutant; "
        + ", ".join(f"{group} {n}" for group, n in sorted(groups.items()))
    )
    if args.check:
        return 0
    lines = tuple(line for line in ledger.lines if args.only is None or line.mutant in args.only)
    with tempfile.TemporaryDirectory(prefix="rwq-mutants-") as scratch:
        base = args.out or Path(scratch)
        reference_adapter = f"{shlex.quote(sys.executable)} -m rwq.conformance.reference_adapter"
        jobs: dict[str, tuple[str, Path, list[str]]] = {}
        for name, cluster in ((REFERENCE, False), (REFERENCE_CLUSTER, True)):
            cases = named_cases(lines, Path(tempfile.mkdtemp(dir=scratch)), cluster=cluster)
            if cases is not None:
                options = ["--cases", str(cases), *["--cluster"] * cluster]
                jobs[name] = (reference_adapter, base / name, options)
        on_cluster = cluster_cases()
        for line in lines:
            if line.also:
                own = Path(tempfile.mkdtemp(dir=scratch))
                named_cases((line,), own, cluster=line.case_id in on_cluster)
                selection = ["--cases", str(own)]
            else:
                selection = ["-k", line.case_id]
            options = [*selection, "--timeout-multiplier", str(line.timeout_multiplier)]
            options += ["--cluster"] * (line.case_id in on_cluster)
            jobs[line.mutant] = (mutant_adapter(line.mutant), base / line.mutant, options)
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {name: pool.submit(conformance, *job) for name, job in jobs.items()}
            runs = {name: future.result() for name, future in futures.items()}
    references = [runs.pop(name) for name in (REFERENCE, REFERENCE_CLUSTER) if name in runs]
    reference = Run(
        max(run.code for run in references),
        {"cases": [record for run in references for record in run.report.get("cases", [])]},
        "".join(run.output for run in references),
        max(run.seconds for run in references),
    )
    named = {case for line in lines for case in (line.case, *line.also)}
    reference_bad = sorted(case for case in named if reference.status(case)[0] != "pass")
    for case in reference_bad:
        print(f"REFERENCE FAILS {case}: {reference.status(case)[0]}")
    if reference.code != 0 and not reference_bad:
        print(reference.output[-3000:])
    missed = 0
    for line in lines:
        why = verdict(line, runs[line.mutant])
        missed += why is not None
        mark = "caught" if why is None else "MISSED"
        print(f"{mark:7} {line.mutant:32} {line.requirement:15} {line.case}" + (f"  <- {why}" if why else ""))
        if why and os.environ.get("RWQ_MUTANTS_VERBOSE"):
            print(runs[line.mutant].output[-2000:])
    caught = len(lines) - missed
    print(
        f"caught {caught}/{len(lines)} mutants ({100 * caught // max(1, len(lines))} %), "
        f"reference passes {len(named) - len(reference_bad)}/{len(named)} named cases"
        f"{'' if reference.code == 0 else f' (exit code {reference.code})'}, "
        f"{time.monotonic() - started:.0f} s"
    )
    return 0 if caught == len(lines) and not reference_bad and reference.code == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
