"""The TypeScript client against raw ioredis and BullMQ for Node (issue 23 §4):
``typescript/bench/rwq-bench.ts``, compiled with the package's own ``tsc`` and run by ``node`` on
the bench's Redis after the Python measurements, its figures turned into rows of their own whose
ratios are taken against raw ioredis of the same run (``Measurement.baseline``).

Without ``node`` (or when the package's dependencies cannot be installed, the program does not
compile or it fails) every row is skipped with the reason; the Python peers' figures are measured
before it and never depend on it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from bench.core import Bench, Config, Measurement
from bench.external import Log, Section, rows

PACKAGE = Path(__file__).resolve().parents[1] / "typescript"
PROGRAM = PACKAGE / "dist" / "bench" / "rwq-bench.js"
RAW, CLIENT, BULLMQ = "ioredis", "rwq-ts", "bullmq-node"
LABELS = {RAW: "raw ioredis", CLIENT: "rwq TypeScript client", BULLMQ: "bullmq (Node)"}
ROWS = rows("async, one process")
"""The program's measurement ids, and their rows when they cannot be measured."""
SECTION = Section("ts", "TS", "TypeScript client", RAW, LABELS, ROWS, "typescript/bench/rwq-bench.ts")


def measure(bench: Bench, config: Config, log: Log) -> list[Measurement]:
    """The TypeScript rows: measured, or each skipped with the reason."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return SECTION.skipped(config, "Node.js is not installed (node or npm not found on PATH)")
    if not (PACKAGE / "node_modules" / "bullmq").is_dir():
        installed = _run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"])
        if installed.returncode != 0:
            return SECTION.skipped(config, f"npm ci failed in typescript/: {installed.stderr.strip()[-500:]}")
    built = _run([node, str(PACKAGE / "node_modules" / "typescript" / "bin" / "tsc"), "-p", "tsconfig.json"])
    if built.returncode != 0:
        return SECTION.skipped(config, f"tsc failed: {(built.stdout + built.stderr).strip()[-500:]}")
    bench.flush()
    command = [
        node,
        "--expose-gc",  # a collection before each timed turn, as the Python and Go peers
        str(PROGRAM),
        f"--url={bench.url}",
        f"--n={config.n}",
        f"--slow-n={config.slow_n}",
        f"--repeats={config.repeats}",
        f"--batch={config.batch}",
        f"--workers={config.processes}",
        f"--wake-samples={config.wake_samples}",
    ]
    return SECTION.run(
        command,
        PACKAGE,
        config,
        log,
        lambda doc: f"Node {doc['node']}, ioredis {doc['ioredis']}, bullmq {doc['bullmq']}",
    )


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, check=False, cwd=PACKAGE, capture_output=True, text=True)
