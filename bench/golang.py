"""The Go client against raw go-redis (issue 23 §4): ``go/cmd/rwq-bench``, built and run on the
bench's Redis after the Python measurements, its figures turned into rows of their own whose ratios
are taken against raw go-redis of the same run (``Measurement.baseline``).

Without a ``go`` toolchain (or when the program does not build or fails) every row is skipped
with the reason; the Python peers' figures are measured before it and never depend on it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from bench.core import Bench, Config, Measurement, PeerResult

Log = Callable[[str], None]
MODULE = Path(__file__).resolve().parents[1] / "go"
RAW, CLIENT = "go-redis", "rwq-go"
LABELS = {RAW: "raw go-redis", CLIENT: "rwq Go client"}
ROWS = {
    "enqueue_one": ("enqueue, 1 item per call", "items/s", "higher"),
    "enqueue_batch": ("enqueue, {batch} items per call", "items/s", "higher"),
    "drain_one": ("drain, 1 consumer, lease + complete", "items/s", "higher"),
    "drain_processes": ("drain, {processes} concurrent consumers (goroutines)", "items/s", "higher"),
    "wake_median": ("blocked consumer wake-up, median", "ms", "lower"),
}
"""The Go program's measurement ids, and their rows when they cannot be measured."""
TIMEOUT_S = 1800


def measure(bench: Bench, config: Config, log: Log) -> list[Measurement]:
    """The Go rows: measured, or each skipped with the reason."""
    go = shutil.which("go")
    if go is None:
        return _skipped(config, "the go toolchain is not installed (go not found on PATH)")
    binary = MODULE / "bin" / "rwq-bench"  # go/bin/, never committed
    built = subprocess.run(
        [go, "build", "-o", str(binary), "./cmd/rwq-bench"],
        check=False,
        cwd=MODULE,
        capture_output=True,
        text=True,
    )
    if built.returncode != 0:
        return _skipped(config, f"go build failed: {built.stderr.strip()[-500:]}")
    bench.flush()
    command = [
        str(binary),
        f"-url={bench.url}",
        f"-n={config.n}",
        f"-repeats={config.repeats}",
        f"-batch={config.batch}",
        f"-workers={config.processes}",
        f"-wake-samples={config.wake_samples}",
    ]
    try:
        ran = subprocess.run(command, check=False, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return _skipped(config, f"rwq-bench ran longer than {TIMEOUT_S} s and was stopped")
    for line in ran.stderr.splitlines():
        log(f"[dim]{line}[/dim]")
    if ran.returncode != 0:
        return _skipped(config, f"rwq-bench failed: {ran.stderr.strip()[-500:]}")
    return rows(json.loads(ran.stdout))


def rows(doc: dict[str, object]) -> list[Measurement]:
    """``rwq-bench``'s JSON as report rows, ids prefixed ``go_``."""
    out = []
    environment = f"{doc['go']}, go-redis {doc['go_redis']}, GOMAXPROCS {doc['gomaxprocs']}"
    for m in doc["measurements"]:  # type: ignore[attr-defined]
        row = Measurement(f"go_{m['id']}", f"Go: {m['title']}", m["unit"], m["better"], baseline=RAW)
        for peer, r in m["results"].items():
            row.results[peer] = PeerResult(r["value"], r["samples"], r["n"], r["how"], r.get("detail", {}))
        row.notes.extend([*m["notes"], f"measured by go/cmd/rwq-bench ({environment})"])
        out.append(row)
    return out


def _skipped(config: Config, reason: str) -> list[Measurement]:
    out = []
    for key, (title, unit, better) in ROWS.items():
        row = Measurement(
            f"go_{key}",
            "Go: " + title.format(batch=config.batch, processes=config.processes),
            unit,
            better,  # type: ignore[arg-type]
            baseline=RAW,
        )
        row.skipped = dict.fromkeys(LABELS, reason)
        out.append(row)
    return out
