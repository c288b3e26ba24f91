"""The Go client's generated mutants (tools/gomutate) for tools/generated_mutants.py.

Selection is by per-case coverage, as for Python: the adapter is built once with ``go build
-cover`` in a copy of ``go/`` whose adapter main gets a hook that writes the coverage counters of
each request into a directory named after the case the runner is running; ``go tool covdata
textfmt`` turns each directory into the lines that case ran. A mutant is applied to its own copy
of ``go/`` (one per worker, the working tree is never touched) and built there; a mutant that does
not compile is ``stillborn`` (no program to test).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
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


def _build(src: Path, out: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["go", "build", *flags, "-o", str(out), "./cmd/rwq-conformance-adapter"],
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


def tasks(ids: set[str], ledger: dict[str, dict[str, Any]], work: Path, max_cases: int) -> list[gm.Task]:
    if not ids:
        return []
    cover = coverage_map(work)
    found = []
    for entry, lines in gm.go_listing():
        if entry.id not in ids:
            continue
        ordered = gm._order(lines, cover, ledger.get(entry.id, {}).get("by"), entry.function, entry.file)
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
