"""Run each blind mutant over the case groups its mistake touches; print the cases that caught it.

    .venv/bin/python redteam/run_blind.py [NAME ...] [--declared-keys]

Caught mutants live in conformance/mutants (with their ledger lines), the others in
redteam/mutants. One run per (mutant, pattern), one at a time (the machine is shared), without the property test
and the workload. Results go to /tmp/red-blind/<mutant>/<pattern>/report.json and a summary line
per mutant to redteam/blind_results.txt.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "conformance" / "mutants"
UNCAUGHT = ROOT / "redteam" / "mutants"  # blind mutants no case catches yet (no ledger line possible)
PATTERNS = ["retry", "release", "delay", "validation", "sharded", "scripts", "declared-keys", "interop"]
EXTRA = {
    "blind_lease_promotes_first": ["lease", "clean", "complete-and-lease", "acl"],
    "blind_decl_release_refund_shift": [],
}


def run(name: str, pattern: str, declared: bool) -> list[str]:
    out = Path("/tmp/red-blind") / name / (pattern + ("-decl" if declared else ""))
    path = MUTANTS / f"{name}.py" if (MUTANTS / f"{name}.py").exists() else UNCAUGHT / f"{name}.py"
    adapter = f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"
    argv = [sys.executable, "-m", "rwq.cli", "conformance", "--adapter", adapter, "--out", str(out)]
    argv += ["-k", pattern, "--no-workload", "--property-examples", "0"]
    if declared:
        argv.append("--declared-keys")
    env = {**os.environ, "PYTHONPATH": str(MUTANTS)}
    subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False, env=env)
    report = out / "report.json"
    if not report.exists():
        return [f"<no report for {pattern}>"]
    cases = json.loads(report.read_text())["cases"]
    return [
        f"{c['id']} [{c['status']}/{(c.get('failure') or {}).get('kind')}]"
        for c in cases
        if c["status"] not in ("pass", "not-applicable", "skip")
    ]


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    declared = "--declared-keys" in sys.argv
    names = args or sorted(p.stem for d in (MUTANTS, UNCAUGHT) for p in d.glob("blind_*.py"))
    with (ROOT / "redteam" / "blind_results.txt").open("a") as results:
        for name in names:
            caught: list[str] = []
            for pattern in PATTERNS + EXTRA.get(name, []):
                caught += [f"{pattern}: {line}" for line in run(name, pattern, declared)]
            line = f"{name}{' (--declared-keys)' if declared else ''}: " + (
                f"CAUGHT by {len(caught)}: " + "; ".join(caught) if caught else "PASSES every case run"
            )
            print(line, flush=True)
            results.write(line + "\n")


if __name__ == "__main__":
    main()
