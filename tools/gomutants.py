"""The Go client's generated mutants (tools/gomutate) for tools/generated_mutants.py.

Selection is by per-case coverage, as for Python: the adapter is built once with ``go build
-cover`` in a copy of ``go/`` whose adapter main gets a hook that writes the coverage counters of
each request into a directory named after the case the runner is running; ``go tool covdata
textfmt`` turns each directory into the lines that case ran.

Mutant schemata: every mutant inside a function is compiled into ONE adapter (``gomutate
schemata``: a mutated copy of its function per mutant, switched at run time by
``$RWQ_GENMUT_ID``), built once in a copy of ``go/`` (the working tree is never touched) with
``-gcflags=-e``; the compiler's errors fall in the copies of the mutants that do not compile, which
are ``stillborn`` (no program to test), dropped, and the schemata built again without them. A
mutant at package level (a constant, a variable's initialiser) cannot be switched: it is applied to
its own copy of ``go/`` (one per worker) and built there.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import generated_mutants as gm
import pymutate

GO = gm.ROOT / "go"
ADAPTER_MAIN = "cmd/rwq-conformance-adapter/main.go"
HOOKED = "op, reply := handle(in.Bytes())"
HOOK = """package main

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime/coverage"
)

var genmutWritten = map[string]bool{}

// genmutCover writes the counters of the request just served into the directory of the case
// the runner is running (named in $RWQ_GENMUT_CASE_FILE), then clears them.
func genmutCover() {
	label, err := os.ReadFile(os.Getenv("RWQ_GENMUT_CASE_FILE"))
	if err != nil || len(label) == 0 {
		return
	}
	dir := filepath.Join(os.Getenv("RWQ_GENMUT_GOCOVER"), hex.EncodeToString(label))
	if !genmutWritten[dir] {
		_ = os.MkdirAll(dir, 0o755)
		_ = coverage.WriteMetaDir(dir)
		genmutWritten[dir] = true
	}
	_ = coverage.WriteCountersDir(dir)
	_ = coverage.ClearCounters()
}
"""


def _copy(dest: Path) -> Path:
    """A copy of go/ without its built binaries."""
    if not dest.exists():
        shutil.copytree(GO, dest, ignore=shutil.ignore_patterns("bin", "*_test.go"))
    return dest


def _build(
    src: Path, out: Path, *flags: str, main: str = "./cmd/rwq-conformance-adapter"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["go", "build", *flags, "-o", str(out), main],
        cwd=src,
        capture_output=True,
        text=True,
        check=False,
    )


def coverage_map(work: Path) -> dict[str, Any]:
    """Like :func:`generated_mutants.coverage_map`, for the Go adapter; cached on the sources."""
    sources = [*sorted(GO.glob("*.go")), GO / ADAPTER_MAIN]
    from rwq.conformance import data  # noqa: PLC0415

    cases = sorted(data.cases_dir().glob("*.json"))
    key = pymutate._digest(*(p.read_text() for p in [*sources, *cases]))
    cache = work / "go-coverage.json"
    if cache.exists():
        cached: dict[str, Any] = json.loads(cache.read_text())
        if cached.get("key") == key:
            return cached
    src = work / "go-coverage-src"
    shutil.rmtree(src, ignore_errors=True)
    _copy(src)
    main = (src / ADAPTER_MAIN).read_text()
    if HOOKED not in main:
        raise SystemExit(f"{ADAPTER_MAIN} no longer has the line {HOOKED!r}: update tools/gomutants.py")
    (src / ADAPTER_MAIN).write_text(main.replace(HOOKED, HOOKED + "\n\t\tgenmutCover()"))
    (src / "cmd/rwq-conformance-adapter/genmut_cover.go").write_text(HOOK)
    adapter = src / "adapter"
    built = _build(src, adapter, "-cover", "-covermode=atomic", "-coverpkg=./...")
    if built.returncode != 0:
        raise SystemExit(f"cannot build the Go adapter with coverage: {built.stderr}")
    counters = work / "go-coverage-data"
    shutil.rmtree(counters, ignore_errors=True)
    counters.mkdir()
    label_file = work / "go-case"
    label_file.write_text("")
    os.environ[pymutate.CASE_FILE_ENV] = str(label_file)
    os.environ["RWQ_GENMUT_GOCOVER"] = str(counters)
    os.environ["GOCOVERDIR"] = str(work / "go-coverage-exit")  # what the adapter writes at exit: unused
    (work / "go-coverage-exit").mkdir(exist_ok=True)
    ms: dict[str, int] = {}
    for declared in (False, True):
        run = gm._suite(
            str(adapter),
            None,
            work / "go-coverage-run",
            declared=declared,
            label_file=label_file,
            fail_fast=False,
        )
        prefix = gm.DECLARED if declared else ""
        ms.update({prefix + r["id"]: r["duration_ms"] for r in run.records if r["status"] == "pass"})
        bad = [r["id"] for r in run.records if r["status"] in gm.FAILED]
        mode = " --declared-keys" if declared else ""
        print(f"Go coverage run{mode}: {len(run.records)} cases, {len(bad)} failing", flush=True)
    covdata = subprocess.run(
        ["go", "tool", "-n", "covdata"], capture_output=True, text=True, check=True
    ).stdout.strip()
    lines: dict[str, set[str]] = {}
    for directory in sorted(counters.iterdir()):
        label = bytes.fromhex(directory.name).decode()
        if label not in ms:
            continue
        text = work / "go-coverage.txt"
        subprocess.run([covdata, "textfmt", f"-i={directory}", f"-o={text}"], check=True, capture_output=True)
        for row in text.read_text().splitlines()[1:]:
            where, _, count = row.rpartition(" ")
            if count == "0":
                continue
            path, _, span = where.split(" ")[0].rpartition(":")
            start, end = span.split(",")
            name = Path(path).name
            for line in range(int(start.split(".")[0]), int(end.split(".")[0]) + 1):
                lines.setdefault(f"{name}:{line}", set()).add(label)
    result = {"key": key, "lines": {k: sorted(v) for k, v in sorted(lines.items())}, "ms": ms}
    cache.write_text(json.dumps(result))
    return result


SCHEMATA_ENV = "RWQ_GENMUT_ID"
"""The environment variable that selects the mutant a schemata adapter runs (its number)."""
PACKAGE = "github.com/rwq-protocol/rwq/go"
COMPILER_ERROR = re.compile(r"^(?:\./)?([\w.-]+\.go):(\d+):")


def _mutator_hash() -> str:
    sources = [*GO.glob("*.go"), GO / ADAPTER_MAIN, *gm.GO_MUTATE.glob("*.go")]
    return pymutate._digest(*(p.read_text() for p in sorted(sources)))


def build_schemata(
    src: Path,
    adapter: Path,
    excluded: set[str],
    package: str = PACKAGE,
    main: str = "./cmd/rwq-conformance-adapter",
) -> tuple[dict[str, int], set[str]]:
    """Build the program ``main`` of the module copied in ``src``, with the mutant schemata of its
    root ``package``, into ``adapter``, leaving out the mutants ``excluded``: ``({id: number},
    stillborn ids)``. The package's files are rewritten from their originals, kept aside in
    ``src/.orig``."""
    orig = src / ".orig"
    if not orig.exists():
        orig.mkdir()
        for path in src.glob("*.go"):
            shutil.copyfile(path, orig / path.name)
    stillborn: set[str] = set()
    for _ in range(6):
        (src / ".excluded").write_text("\n".join(sorted(excluded | stillborn)) + "\n")
        listing = gm.gomutate("schemata", str(orig), str(src), str(src / ".excluded"))
        copies = [json.loads(line) for line in listing.splitlines()]
        built = _build(src, adapter, f"-gcflags={package}=-e", main=main)
        if built.returncode == 0:
            return {copy["id"]: copy["n"] for copy in copies}, stillborn
        found = set()
        for line in built.stderr.splitlines():
            where = COMPILER_ERROR.match(line)
            if not where:
                continue
            name, number = where.group(1), int(where.group(2))
            owner = [c["id"] for c in copies if c["file"] == name and c["start"] <= number <= c["end"]]
            if not owner:
                raise SystemExit(f"a schemata build error outside every mutant's copy: {line}")
            found.update(owner)
        if not found:
            raise SystemExit(f"cannot build the Go schemata adapter: {built.stderr[-2000:]}")
        stillborn |= found
    raise SystemExit("the Go schemata adapter still does not build after 6 rounds")


def schemata(work: Path) -> dict[str, Any]:
    """The Go client's mutant schemata, built once and cached on the sources: ``{"adapter",
    "switched": {id: number}, "stillborn": [ids], "seconds"}``."""
    key = _mutator_hash()
    cache = work / "go-schemata.json"
    if cache.exists():
        cached: dict[str, Any] = json.loads(cache.read_text())
        if cached.get("key") == key and Path(cached["adapter"]).exists():
            return cached
    started = time.monotonic()
    src = work / "go-schemata-src"
    shutil.rmtree(src, ignore_errors=True)
    _copy(src)
    skipped = {json.loads(line)["id"] for line in gm.gomutate("list", str(GO)).splitlines()}
    skipped = {key for key in skipped if "/".join(key.split("/")[:2]) in gm.GO_SKIPPED}
    adapter = work / "go-schemata-adapter"
    switched, stillborn = build_schemata(src, adapter, skipped)
    result = {
        "key": key,
        "adapter": str(adapter),
        "switched": switched,
        "stillborn": sorted(stillborn),
        "seconds": round(time.monotonic() - started, 1),
    }
    print(
        f"Go schemata: {len(switched)} mutants in one adapter, {len(stillborn)} stillborn, "
        f"built in {result['seconds']} s",
        flush=True,
    )
    cache.write_text(json.dumps(result))
    return result


def tasks(ids: set[str], ledger: dict[str, dict[str, Any]], work: Path, max_cases: int) -> list[gm.Task]:
    """The tasks of the Go mutants ``ids``: a switched mutant runs the schemata adapter with its
    number; a stillborn one runs nothing; one at package level is built on its own first."""
    if not ids:
        return []
    cover = coverage_map(work)
    built = schemata(work)
    stillborn = set(built["stillborn"])
    verdicts = gm.load_verdicts()
    found = []
    for entry, lines in gm.go_listing():
        if entry.id not in ids:
            continue
        last = ledger.get(entry.id, {}).get("by")
        ordered = gm._order(lines, cover, last, entry.function, entry.file)
        if not ordered and entry.function == "<package>":
            # read by no line the suite runs (the adapter's defaults, read in its main): every
            # case, its file's group first
            every = {**cover, "lines": {"*": list(cover["ms"])}}
            ordered = gm._order(("*",), every, last, entry.function, entry.file)
        named = verdicts.get(entry.id, {}).get("killed_by")
        if named:  # the case written for it runs first (and runs even if coverage missed it)
            ordered = [named, *(label for label in ordered if label != named)]
        if entry.id in stillborn:
            found.append(gm.capped(entry.id, "", ordered, max_cases, build=("stillborn",)))
        elif entry.id in built["switched"]:
            number = built["switched"][entry.id]
            adapter = f"env {SCHEMATA_ENV}={number} {shlex.quote(built['adapter'])}"
            found.append(gm.capped(entry.id, adapter, ordered, max_cases))
        else:
            found.append(gm.capped(entry.id, "", ordered, max_cases, build=("go", entry.id)))
    return found


def prepare(mutant_id: str, work: Path) -> str | None:
    """Build the adapter of ``mutant_id`` in this worker's copy of go/: its command, or None when
    the mutant does not compile."""
    src = _copy(work / f"go-{os.getpid()}")
    name = mutant_id.split("/")[1]
    for path in src.glob("*.go"):  # the previous mutant's file back to the original
        if path.read_bytes() != (GO / path.name).read_bytes():
            shutil.copyfile(GO / path.name, path)
    subprocess.run(
        ["go", "run", ".", "apply", str(GO), mutant_id, str(src)],
        cwd=gm.GO_MUTATE,
        check=True,
        capture_output=True,
    )
    adapter = src / "adapter"
    built = _build(src, adapter)
    shutil.copyfile(GO / name, src / name)
    return str(adapter) if built.returncode == 0 else None


if __name__ == "__main__":
    sys.exit("run tools/generated_mutants.py")
