"""Generated mutants: run every mutant of the protocol layer and of the Go client against the
conformance suite in a fast mode, and keep their ledger (``conformance/audit/generated/``).

Python mutants come from ``tools/pymutate.py``, Go mutants from ``tools/gomutate`` (both small AST
mutators; conformance/README.md says why). Fast mode: the suite runs once with the reference
adapter under coverage.py, one dynamic context per case, plain and with ``--declared-keys``; then
each Python mutant runs only the cases that cover its line, the case that killed it last time
first, and stops at its first failing case. Go mutants are selected the same way, by the
per-case coverage of the Go adapter, and run in one adapter built with all of them (mutant
schemata, tools/gomutants.py). The runner is driven in-process so that
one Redis serves every run of a worker.

    python tools/generated_mutants.py [--lang py|go ...] [--incremental] [--jobs N] [--only ID ...]
    python tools/generated_mutants.py --check     # the ledger is fresh and every survivor judged

Results go to ``ledger.json`` (generated: one line per mutant); verdicts on survivors are written
by hand in ``verdicts.json``: ``{"<id>": {"equivalent": "<reason>"}}`` or ``{"killed_by": "<case>"}``
(the case that now kills it; the next run proves it).
"""

from __future__ import annotations

import argparse
import atexit
import io
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pymutate

ROOT = Path(__file__).resolve().parents[1]
AUDIT = ROOT / "conformance" / "audit" / "generated"
LEDGER = AUDIT / "ledger.json"
VERDICTS = AUDIT / "verdicts.json"
WORK = ROOT / "conformance-out-generated"
GO_MUTATE = ROOT / "tools" / "gomutate"
FAILED = {"fail", "error", "timeout", "crash", "warn"}
PYMUTATE = f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'tools' / 'pymutate.py'))}"
"""The command that serves the reference adapter with a mutant (``--mutant ID``) or coverage."""
JUDGED = {"equivalent", "outside_fast_mode", "gap"}
"""Verdicts that settle a survivor (``killed_by`` must be proven by a run)."""
DECLARED = "dk:"
"""Label prefix of a case run with ``--declared-keys``."""


# -- mutants of both languages -----------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    """A mutant as the ledger lists it."""

    id: str
    file: str
    function: str
    operator: str
    line: int
    original: str
    mutated: str
    source_hash: str


def python_mutants() -> tuple[list[Entry], dict[str, tuple[str, ...]]]:
    """The Python mutants and, for each, the ``file:line`` whose coverage selects its cases."""
    found = pymutate.generate()
    entries = [
        Entry(m.id, m.file, m.function, m.operator, m.line, m.original, m.mutated, m.source_hash)
        for m in found
    ]
    return entries, {m.id: m.lines for m in found}


GO_SKIPPED = {
    "go/worker.go": "the worker runtime (Run, handlers, retry of handler errors), built on the queue "
    "methods: the adapter maps no call onto it, so the suite cannot reach it by design "
    "(go/worker_test.go covers it)",
}


def gomutate(*args: str) -> str:
    """Run tools/gomutate, built once per process into the work directory."""
    binary = WORK / f"gomutate-{os.getpid()}"
    if not binary.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["go", "build", "-o", str(binary), "."], cwd=GO_MUTATE, check=True, capture_output=True
        )
        atexit.register(binary.unlink, missing_ok=True)
    return subprocess.run([str(binary), *args], capture_output=True, text=True, check=True).stdout


def go_listing() -> list[tuple[Entry, tuple[str, ...]]]:
    """The Go client's mutants and the ``file:line`` whose coverage selects each one's cases."""
    found = []
    for line in gomutate("list", str(ROOT / "go")).splitlines():
        fields = json.loads(line)
        lines = tuple(fields.pop("lines") or ())
        if fields["file"] not in GO_SKIPPED:
            found.append((Entry(**fields), lines))
    return found


def go_mutants() -> list[Entry]:
    return [entry for entry, _ in go_listing()]


def all_mutants(langs: Iterable[str]) -> list[Entry]:
    entries: list[Entry] = []
    if "py" in langs:
        entries += python_mutants()[0]
    if "go" in langs:
        entries += go_mutants()
    return entries


# -- the ledger ----------------------------------------------------------------------------------
def load_ledger() -> dict[str, dict[str, Any]]:
    if not LEDGER.exists():
        return {}
    return {entry["id"]: entry for entry in json.loads(LEDGER.read_text())["mutants"]}


def _pending_reasons() -> dict[str, str]:
    if not LEDGER.exists():
        return {}
    return dict(json.loads(LEDGER.read_text()).get("pending", {}))


def load_verdicts() -> dict[str, dict[str, str]]:
    if not VERDICTS.exists():
        return {}
    document: dict[str, Any] = json.loads(VERDICTS.read_text())
    return dict(document["verdicts"])


def write_ledger(entries: dict[str, dict[str, Any]], pending: dict[str, str] | None = None) -> None:
    """One mutant a line, sorted by id: a run changes only the lines of mutants that changed."""
    AUDIT.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(entries[key], ensure_ascii=False, sort_keys=True) for key in sorted(entries)]
    header = {
        "$schema": "ledger.schema.json",
        "format": 1,
        "skipped": {
            **{f"python/rwq/protocol/{name}": why for name, why in pymutate.SKIPPED.items()},
            **GO_SKIPPED,
        },
    }
    waiting = sorted({entry["file"] for entry in entries.values() if entry["result"] == "pending"})
    if waiting:
        header["pending"] = {
            name: (pending or {}).get(name) or _pending_reasons().get(name, "") for name in waiting
        }
    text = json.dumps(header, ensure_ascii=False)[:-1] + ', "mutants": [\n'
    partial = LEDGER.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(text + ",\n".join(lines) + "\n]}\n")
    partial.replace(LEDGER)


def _save(ledger: dict[str, dict[str, Any]], changed: set[str], pending: dict[str, str]) -> None:
    """Write the entries this run ``changed`` (recorded, deferred or dropped) over the ledger on
    disk, keeping every other entry as it is there: runs of other mutants may go on at once."""
    merged = load_ledger()
    for key in changed:
        if key in ledger:
            merged[key] = ledger[key]
        else:
            merged.pop(key, None)
    write_ledger(merged, {**_pending_reasons(), **pending})


def _schema_errors(name: str, document: Any) -> list[str]:
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]  # noqa: PLC0415

    schema = json.loads((AUDIT / f"{name}.schema.json").read_text())
    errors = Draft202012Validator(schema).iter_errors(document)
    return [f"at /{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors]


def problems(langs: Sequence[str] = ("py", "go")) -> list[str]:
    """How the ledger is stale or unjudged: the freshness check of ``make test``."""
    found: list[str] = []
    ledger = load_ledger()
    verdicts = load_verdicts()
    document = json.loads(LEDGER.read_text()) if LEDGER.exists() else {}
    found += [f"ledger.json: {e}" for e in _schema_errors("ledger", document)]
    if VERDICTS.exists():
        verdict_document = json.loads(VERDICTS.read_text())
        found += [f"verdicts.json: {e}" for e in _schema_errors("verdicts", verdict_document)]
    current = {entry.id: entry for entry in all_mutants(langs)}
    listed = {key: value for key, value in ledger.items() if key.split("/")[0] in langs}
    found += [
        f"{key}: generated but not in the ledger (run with --incremental)"
        for key in sorted(set(current) - set(listed))
    ]
    found += [f"{key}: in the ledger but no longer generated" for key in sorted(set(listed) - set(current))]
    for key in sorted(set(current) & set(listed)):
        if listed[key]["source_hash"] != current[key].source_hash:
            found.append(f"{key}: its source changed since the ledger's run (run with --incremental)")
    pending = document.get("pending", {})
    for key, entry in sorted(listed.items()):
        verdict = verdicts.get(key)
        if entry["result"] == "pending":
            if entry["file"] not in pending:
                found.append(f"{key}: pending, but the ledger does not say why {entry['file']} waits")
            continue
        if entry["result"] not in ("killed", "stillborn") and not (verdict or {}).keys() & JUDGED:
            found.append(
                f"{key}: {entry['result']} without a verdict ({entry['original']} -> {entry['mutated']})"
            )
        if verdict and "killed_by" in verdict and entry["result"] != "killed":
            found.append(f"{key}: its verdict names {verdict['killed_by']}, which does not kill it")
    known = set(ledger)
    found += [f"verdicts.json: {key} is no generated mutant" for key in sorted(set(verdicts) - known)]
    return found


# -- per-case coverage of the reference adapter ------------------------------------------------------
def _sources_hash() -> str:
    return pymutate._digest(*(p.read_text() for p in sorted(pymutate.PROTOCOL.glob("*.py"))))


def coverage_map(work: Path) -> dict[str, Any]:
    """``{"lines": {"file:line": [case labels]}, "ms": {label: duration}}``, from a cache that is
    kept while the protocol sources and the cases are unchanged."""
    from rwq.conformance import data  # noqa: PLC0415

    cases_hash = pymutate._digest(*(p.read_text() for p in sorted(data.cases_dir().glob("*.json"))))
    key = f"{_sources_hash()}-{cases_hash}"
    cache = work / "coverage.json"
    if cache.exists():
        cached: dict[str, Any] = json.loads(cache.read_text())
        if cached.get("key") == key:
            return cached
    import coverage  # noqa: PLC0415

    data_dir = work / "coverage-data"
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    label_file = data_dir / "case"
    label_file.write_text("")
    os.environ[pymutate.CASE_FILE_ENV] = str(label_file)
    adapter = f"{PYMUTATE} --coverage {shlex.quote(str(data_dir / 'cov'))}"
    ms: dict[str, int] = {}
    for declared in (False, True):
        started = time.monotonic()
        run = _suite(
            adapter, None, work / "coverage-run", declared=declared, label_file=label_file, fail_fast=False
        )
        bad = [r["id"] for r in run.records if r["status"] in FAILED]
        print(
            f"coverage run{' --declared-keys' if declared else ''}: {len(run.records)} cases, "
            f"{time.monotonic() - started:.0f} s",
            flush=True,
        )
        if bad:
            raise SystemExit(f"the reference fails {', '.join(bad)}: fix that first")
        prefix = DECLARED if declared else ""
        ms.update({prefix + r["id"]: r["duration_ms"] for r in run.records if r["status"] == "pass"})
    combined = coverage.Coverage(data_file=str(data_dir / "cov"))
    combined.combine([str(data_dir)])
    measured = combined.get_data()
    lines: dict[str, set[str]] = {}
    for filename in measured.measured_files():
        name = Path(filename).name
        for line, contexts in measured.contexts_by_lineno(filename).items():
            lines.setdefault(f"{name}:{line}", set()).update(c for c in contexts if c in ms)
    result = {"key": key, "lines": {k: sorted(v) for k, v in sorted(lines.items())}, "ms": ms}
    cache.write_text(json.dumps(result))
    return result


# -- running the suite in-process --------------------------------------------------------------------
_ENV: dict[str, Any] = {}
_CORPUS: dict[str, Any] = {}


def _shared_env() -> Any:
    """One managed Redis for every run of this process (each case has its own namespace)."""
    from rwq.conformance.environment import RedisEnvironment  # noqa: PLC0415

    if not _ENV:
        env = RedisEnvironment.managed()
        atexit.register(env.close)
        setattr(env, "close", lambda: None)  # noqa: B010 - the runner closes it after each run
        _ENV["env"] = env
    return _ENV["env"]


def _suite(
    adapter: str,
    labels: Sequence[str] | None,
    out: Path,
    *,
    declared: bool,
    label_file: Path | None = None,
    fail_fast: bool = True,
) -> Any:
    """Run the cases ``labels`` (None: every deterministic case) in this order; with
    ``fail_fast``, the cases after the first failure are not run."""
    from rich.console import Console  # noqa: PLC0415

    from rwq.conformance import data, runner  # noqa: PLC0415
    from rwq.conformance.cases import load_cases  # noqa: PLC0415
    from rwq.conformance.pool import expand  # noqa: PLC0415

    if not _CORPUS:
        _CORPUS.update({case.id: case for case in expand(load_cases(data.cases_dir()))})
    env = _shared_env()

    class FastRun(runner.Run):
        killer: dict[str, Any] | None = None

        def _prepare(self) -> tuple[list[str], list[Any]]:
            self.corpus = list(_CORPUS.values())
            chosen = [_CORPUS[label] for label in labels if label in _CORPUS] if labels else self.corpus
            if declared:
                chosen = [runner.with_declared_keys(case) for case in chosen]
            return shlex.split(self.config.adapter), chosen

        def run_one(self, case: Any, env: Any, pool: Any) -> dict[str, Any]:
            if label_file is not None:
                label_file.write_text((DECLARED if declared else "") + case.id)
            record: dict[str, Any] = super().run_one(case, env, pool)
            if fail_fast and self.killer is None and record["status"] in FAILED:
                self.killer = record
                self.stopped = "stopped at the first failing case"
            return record

    shutil.rmtree(out, ignore_errors=True)
    config = runner.RunConfig(
        adapter=adapter,
        out=out,
        declared_keys=declared,
        console=Console(file=io.StringIO()),
        seed=1,
        jobs=1,  # in order, so that the first failure is the first killer tried
    )
    run = FastRun(config)
    from rwq.conformance.environment import RedisEnvironment  # noqa: PLC0415

    managed = RedisEnvironment.__dict__["managed"]
    setattr(RedisEnvironment, "managed", classmethod(lambda cls: env))  # noqa: B010 - the shared Redis
    try:
        run.execute()
    finally:
        setattr(RedisEnvironment, "managed", managed)  # noqa: B010
    return run


@dataclass(frozen=True)
class Task:
    """One mutant to run: its adapter command and the cases to try, killers first."""

    id: str
    adapter: str
    plain: tuple[str, ...]
    declared: tuple[str, ...]
    covering: int = 0
    """How many cases cover the mutant (``plain`` and ``declared`` may be capped below it)."""
    build: tuple[str, ...] = ()
    """For a Go mutant at package level: build its adapter first (``adapter`` is then that binary);
    ``("stillborn",)`` for one whose copy in the schemata did not compile."""


def run_task(task: Task, work: str) -> dict[str, Any]:
    """Run one mutant: ``{"result": killed|survived|not-covered, "by", "kind", "cases", "seconds"}``."""
    started = time.monotonic()
    out = Path(work) / f"run-{os.getpid()}"
    result: dict[str, Any] = {"result": "survived", "cases": 0, "covering": task.covering}
    if not task.plain and not task.declared:
        result["result"] = "not-covered"
    if task.build:
        import gomutants  # noqa: PLC0415

        stillborn = task.build[0] == "stillborn"  # its copy in the schemata did not compile
        adapter = None if stillborn else gomutants.prepare(task.id, Path(work))
        if adapter is None:
            result.update(result="stillborn", seconds=round(time.monotonic() - started, 1))
            return result
        task = Task(task.id, adapter, task.plain, task.declared, task.covering)
    for declared, labels in ((False, task.plain), (True, task.declared)):
        if not labels:
            continue
        run = _suite(task.adapter, labels, out, declared=declared)
        result["cases"] += sum(r["status"] != "not-run" for r in run.records)
        if run.killer is not None:
            failure = run.killer.get("failure") or {}
            result.update(
                result="killed",
                by=(DECLARED if declared else "") + run.killer["id"],
                kind=f"{run.killer['status']}: {str(failure.get('message', ''))[:200]}",
            )
            break
        if run.hello is None:
            result.update(result="killed", by="(handshake)", kind=str(run.aborted)[:200])
            break
    result["seconds"] = round(time.monotonic() - started, 1)
    return result


# -- the runs ----------------------------------------------------------------------------------------
GROUP_WORDS = {
    "validation": "validation",
    "validate": "validation",
    "declared": "declared",
    "sharding": "sharded",
    "sharded": "sharded",
    "ack": "ack",
    "clean": "clean",
    "retry": "retry",
}
"""A source file's name -> the word its cases carry in their ids (validation.py: validation/...;
go/ack.go: ack/..., whose constants every call reads but only the ack cases use)."""


def _order(
    lines: Iterable[str], cover: dict[str, Any], first: str | None, function: str = "", file: str = ""
) -> list[str]:
    """The cases covering ``lines``, the most specific first: a case scores 1/n for each of the
    lines it covers that n cases cover (a constant read on an error path ranks that path's cases
    before the common ones), plus 1 when its id names the mutant's function or its file's group
    (``prefix`` ranks ``keys/prefix/...``, validation.py ``validation/...`` first among the cases
    every call runs); then the fastest; the mutant's last killer before all."""
    score: dict[str, float] = {}
    for line in lines:
        labels = cover["lines"].get(line, ())
        for label in labels:
            score[label] = score.get(label, 0.0) + 1 / len(labels)
    words = {w for w in function.replace(".", "_").lower().split("_") if len(w) >= 4}
    stem = Path(file).stem
    if stem in GROUP_WORDS:
        words.add(GROUP_WORDS[stem])
    for label in score:
        named = set(label.replace("/", "-").replace("_", "-").split("-"))
        score[label] += 1.0 if words & named else 0.0
    ms = cover["ms"]
    ordered = sorted(score, key=lambda label: (-round(score[label], 6), ms.get(label, 10**9), label))
    if first in ordered:
        ordered.remove(first)
        ordered.insert(0, first)
    return ordered


def capped(
    mutant_id: str, adapter: str, ordered: list[str], max_cases: int, build: tuple[str, ...] = ()
) -> Task:
    """The task of a mutant: its ``max_cases`` most specific covering cases (0: all of them)."""
    chosen = ordered[:max_cases] if max_cases else ordered
    plain = tuple(label for label in chosen if not label.startswith(DECLARED))
    declared = tuple(label.removeprefix(DECLARED) for label in chosen if label.startswith(DECLARED))
    return Task(mutant_id, adapter, plain, declared, len(ordered), build)


def python_tasks(ids: set[str], ledger: dict[str, dict[str, Any]], work: Path, max_cases: int) -> list[Task]:
    entries, lines = python_mutants()
    cover = coverage_map(work)
    verdicts = load_verdicts()
    tasks = []
    for entry in entries:
        if entry.id not in ids:
            continue
        last = ledger.get(entry.id, {}).get("by")
        ordered = _order(lines[entry.id], cover, last, entry.function, entry.file)
        if not ordered and entry.function == "<module>":  # read by no executed line: import time only
            ordered = sorted(cover["ms"], key=lambda label: (cover["ms"][label], label))
        named = verdicts.get(entry.id, {}).get("killed_by")
        if named:  # the case written for it runs first (and runs even if coverage missed it)
            ordered = [named, *(label for label in ordered if label != named)]
        adapter = f"{PYMUTATE} --mutant {shlex.quote(entry.id)}"
        tasks.append(capped(entry.id, adapter, ordered, max_cases))
    return tasks


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lang", action="append", choices=("py", "go"), help="default: both")
    parser.add_argument(
        "--incremental", action="store_true", help="only mutants new or changed since the ledger"
    )
    parser.add_argument("--only", nargs="*", default=None, help="only these mutant ids")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--max-cases",
        type=int,
        default=12,
        help="first pass: run at most this many covering cases per mutant, the most specific first",
    )
    parser.add_argument(
        "--survivor-cases",
        type=int,
        default=40,
        help="second pass, for the survivors of the first: at most this many (0: every covering case)",
    )
    parser.add_argument(
        "--check", action="store_true", help="check the ledger is fresh and judged; run nothing"
    )
    parser.add_argument("--work", type=Path, default=WORK)
    parser.add_argument(
        "--defer-unjudged",
        metavar="REASON",
        help="run nothing; list as pending, with REASON, the survivors (of --only, if given) that "
        "have no verdict; a judged survivor keeps its verdict",
    )
    parser.add_argument(
        "--defer",
        nargs=2,
        action="append",
        default=[],
        metavar=("FILE", "REASON"),
        help="list the mutants of FILE (go/queue.go) as pending, with REASON, instead of running them",
    )
    args = parser.parse_args(argv)
    langs = tuple(args.lang or ("py", "go"))
    if args.check:
        found = problems(langs)
        print("\n".join(found) or "generated mutants: ledger fresh, every survivor judged")
        return 1 if found else 0
    args.work.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    ledger = load_ledger()
    current = {entry.id: entry for entry in all_mutants(langs)}
    wanted = set(current)
    if args.only:
        wanted &= set(args.only)
    if args.incremental:
        wanted = {
            key
            for key in wanted
            if key not in ledger
            or ledger[key]["source_hash"] != current[key].source_hash
            or ledger[key]["result"] == "pending"
        }
    deferred = dict(args.defer)
    changed: set[str] = set()
    if args.defer_unjudged:
        verdicts = load_verdicts()
        for key, entry in ledger.items():
            unjudged = not verdicts.get(key, {}).keys() & JUDGED
            alive = entry["result"] in ("survived", "not-covered")
            if key in wanted and alive and unjudged:
                entry["result"] = "pending"
                deferred[entry["file"]] = args.defer_unjudged
                changed.add(key)
        _save(ledger, changed, deferred)
        return _summary(ledger, langs, time.monotonic() - started)
    for key in sorted(wanted):
        if current[key].file in deferred:
            wanted.discard(key)
            if ledger.get(key, {}).get("result") in (None, "pending"):
                ledger[key] = {
                    **asdict(current[key]),
                    "result": "pending",
                    "cases": 0,
                    "covering": 0,
                    "seconds": 0,
                }
                changed.add(key)
    tasks: list[Task] = []
    if "py" in langs:
        tasks += python_tasks({k for k in wanted if k.startswith("py/")}, ledger, args.work, args.max_cases)
    if "go" in langs:
        import gomutants  # noqa: PLC0415

        tasks += gomutants.tasks(
            {k for k in wanted if k.startswith("go/")}, ledger, args.work, args.max_cases
        )
    print(f"{len(tasks)} mutants to run ({len(current)} generated), {args.jobs} jobs", flush=True)
    for key in list(ledger):  # mutants no longer generated leave the ledger
        if key.split("/")[0] in langs and key not in current:
            del ledger[key]
            changed.add(key)

    def record(key: str, result: dict[str, Any], done: int) -> None:
        ledger[key] = {**asdict(current[key]), **result}
        changed.add(key)
        if done % 25 == 0:  # a long run that is stopped keeps what it found
            _save(ledger, changed, deferred)

    _run_all(tasks, args.jobs, args.work, record)
    # Second pass: a survivor of its most specific cases runs every case that covers it.
    again = {
        task.id
        for task in tasks
        if ledger[task.id]["result"] == "survived"
        and ledger[task.id]["cases"] < min(ledger[task.id]["covering"], args.survivor_cases or 10**9)
    }
    if again:
        print(
            f"{len(again)} survivors of their first {args.max_cases} cases: up to "
            f"{args.survivor_cases or 'all'} covering cases now",
            flush=True,
        )
        retry: list[Task] = []
        if "py" in langs:
            retry += python_tasks(
                {k for k in again if k.startswith("py/")}, ledger, args.work, args.survivor_cases
            )
        if "go" in langs:
            import gomutants  # noqa: PLC0415

            retry += gomutants.tasks(
                {k for k in again if k.startswith("go/")}, ledger, args.work, args.survivor_cases
            )
        _run_all(retry, args.jobs, args.work, record)
    _save(ledger, changed, deferred)
    return _summary(ledger, langs, time.monotonic() - started)


def worker() -> None:
    """Run the tasks read from stdin (one JSON line each), one result line each on stdout."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # atexit stops this worker's Redis
    channel = sys.stdout
    sys.stdout = sys.stderr
    for line in sys.stdin:
        request = json.loads(line)
        fields = request["task"]
        task = Task(
            fields["id"],
            fields["adapter"],
            tuple(fields["plain"]),
            tuple(fields["declared"]),
            fields["covering"],
            tuple(fields["build"]),
        )
        channel.write(json.dumps(run_task(task, request["work"])) + "\n")
        channel.flush()


class _Workers:
    """``jobs`` worker processes (each with its own Redis), lent to one thread at a time."""

    def __init__(self, jobs: int) -> None:
        import queue  # noqa: PLC0415

        self.idle: queue.Queue[subprocess.Popen[str]] = queue.Queue()
        self.all = [
            subprocess.Popen(
                ["nice", "-n", "19", sys.executable, str(Path(__file__).resolve()), "--worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(jobs)
        ]
        for process in self.all:
            self.idle.put(process)

    def run(self, task: Task, work: Path) -> dict[str, Any]:
        process = self.idle.get()
        try:
            assert process.stdin is not None
            assert process.stdout is not None
            process.stdin.write(json.dumps({"task": asdict(task), "work": str(work)}) + "\n")
            process.stdin.flush()
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"worker {process.pid} died running {task.id}")
            result: dict[str, Any] = json.loads(line)
            return result
        finally:
            self.idle.put(process)

    def close(self) -> None:
        for process in self.all:
            assert process.stdin is not None
            process.stdin.close()
        for process in self.all:
            process.wait(timeout=60)


def _run_all(
    tasks: list[Task], jobs: int, work: Path, record: Callable[[str, dict[str, Any], int], None]
) -> None:
    workers = _Workers(jobs)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(workers.run, task, work): task for task in tasks}
        for done, future in enumerate(as_completed(futures), 1):
            task = futures[future]
            result = future.result()
            record(task.id, result, done)
            if result["result"] != "killed" or done % 50 == 0:
                print(
                    f"[{done}/{len(tasks)}] {task.id}: {result['result']} ({result['cases']} cases, "
                    f"{result['seconds']} s)",
                    flush=True,
                )
    workers.close()


def _summary(ledger: dict[str, dict[str, Any]], langs: Sequence[str], seconds: float) -> int:
    """Print the counts per language; 1 when a survivor has no verdict."""
    verdicts = load_verdicts()
    unjudged = 0
    for lang in langs:
        entries = [entry for key, entry in ledger.items() if key.startswith(lang + "/")]
        counts = {r: sum(e["result"] == r for e in entries) for r in ("killed", "stillborn", "pending")}
        alive = [e for e in entries if e["result"] in ("survived", "not-covered")]
        equivalent = [e for e in alive if "equivalent" in verdicts.get(e["id"], {})]
        outside = [e for e in alive if "outside_fast_mode" in verdicts.get(e["id"], {})]
        gaps = [e for e in alive if "gap" in verdicts.get(e["id"], {})]
        open_ = [e for e in alive if not verdicts.get(e["id"], {}).keys() & JUDGED]
        unjudged += len(open_)
        print(
            f"{lang}: {len(entries)} mutants, {counts['killed']} killed, {len(alive)} survived "
            f"({len(equivalent)} equivalent, {len(outside)} outside fast mode, {len(gaps)} known gaps, "
            f"{len(open_)} without a verdict), "
            f"{counts['stillborn']} stillborn, {counts['pending']} pending"
        )
        for entry in open_[:60]:
            print(
                f"  {entry['id']} ({entry['file']}:{entry['line']}): "
                f"{entry['original']} -> {entry['mutated']}"
            )
    print(f"{seconds:.0f} s")
    return 1 if unjudged else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        worker()
    else:
        sys.exit(main())
