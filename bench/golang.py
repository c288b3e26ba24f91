"""The Go client against raw go-redis (issue 23 §4): ``go/cmd/rwq-bench``, built and run on the
bench's Redis after the Python measurements, its figures turned into rows of their own whose ratios
are taken against raw go-redis of the same run (``Measurement.baseline``).

Without a ``go`` toolchain (or when the program does not build or fails) every row is skipped
with the reason; the Python peers' figures are measured before it and never depend on it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from bench.core import Bench, Config, Measurement
from bench.external import Log, Section, rows

MODULE = Path(__file__).resolve().parents[1] / "go"
RAW, CLIENT = "go-redis", "rwq-go"
LABELS = {RAW: "raw go-redis", CLIENT: "rwq Go client"}
ROWS = rows("goroutines")
"""The Go program's measurement ids, and their rows when they cannot be measured."""
SECTION = Section("go", "Go", "Go client", RAW, LABELS, ROWS, "go/cmd/rwq-bench")


def measure(bench: Bench, config: Config, log: Log) -> list[Measurement]:
    """The Go rows: measured, or each skipped with the reason."""
    go = shutil.which("go")
    if go is None:
        return SECTION.skipped(config, "the go toolchain is not installed (go not found on PATH)")
    binary = MODULE / "bin" / "rwq-bench"  # go/bin/, never committed
    built = subprocess.run(
        [go, "build", "-o", str(binary), "./cmd/rwq-bench"],
        check=False,
        cwd=MODULE,
        capture_output=True,
        text=True,
    )
    if built.returncode != 0:
        return SECTION.skipped(config, f"go build failed: {built.stderr.strip()[-500:]}")
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
    return SECTION.run(
        command,
        MODULE,
        config,
        log,
        lambda doc: f"{doc['go']}, go-redis {doc['go_redis']}, GOMAXPROCS {doc['gomaxprocs']}",
    )
