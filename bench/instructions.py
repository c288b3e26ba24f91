"""What a script call costs the server in instructions: a figure the machine's load does not move.

``python -m bench.instructions [--against REV] [--calls N]`` runs ``redis-server`` under
``valgrind --tool=callgrind`` with instrumentation off, brings each scenario's state about with
the client, then counts the instructions the server runs for ``N`` back-to-back calls of the
scenario's operation (callgrind counts what the binary executes, the same for every run on the
same binary and state, whatever else the machine does). ``--against REV`` runs the same
scenarios with the scripts of a git revision (same argument layouts) for an A/B. Timing a script
in microseconds on a shared machine moves by 2x between runs; docs/design/key-checks.md has the
figures of #22. Needs valgrind (Debian's package); not part of ``make test``.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import redis

from rwq import RetryPolicy, WorkQueue
from rwq.protocol.scripts import SCRIPT_NAMES, Script, registry

LEASE_MS = 60_000
PAYLOAD = b"x" * 100
Scenario = tuple[Callable[[WorkQueue, int], object], Callable[[WorkQueue, object, int], object]]


def _held(policy: bool) -> Callable[[WorkQueue, int], object]:
    """Setup: ``n`` items leased and ``n`` more ready (with a retry policy if asked)."""

    def setup(q: WorkQueue, n: int) -> object:
        if policy:
            q.set_retry_policy(RetryPolicy(max_attempts=5))
        for start in range(0, 2 * n, 1000):
            q.add_many([(f"i{k}", PAYLOAD) for k in range(start, min(start + 1000, 2 * n))])
        return [q.lease(LEASE_MS) for _ in range(n)]

    return setup


def _drain(q: WorkQueue, held: object, k: int) -> object:
    return q.complete_and_lease(held[k], LEASE_MS)  # type: ignore[index]


def _ready(n: int) -> Callable[[WorkQueue, int], object]:
    """Setup: ``n`` ready items per call to come."""

    def setup(q: WorkQueue, calls: int) -> object:
        for start in range(0, n * calls, 1000):
            q.add_many([(f"i{k}", PAYLOAD) for k in range(start, min(start + 1000, n * calls))])
        return None

    return setup


def _stats(scenario: Scenario) -> Scenario:
    """``scenario`` on a queue whose statistics are on (profile stats, SPEC §22)."""
    setup, run = scenario

    def with_stats(q: WorkQueue, n: int) -> object:
        q.enable_stats()
        return setup(q, n)

    return with_stats, run


SCENARIOS: dict[str, Scenario] = {
    "add": (lambda q, n: None, lambda q, _, k: q.add(f"n{k}", PAYLOAD)),
    "add_many_100": (
        lambda q, n: None,
        lambda q, _, k: q.add_many([(f"n{k}-{j}", PAYLOAD) for j in range(100)]),
    ),
    "lease": (_ready(1), lambda q, _, k: q.lease(LEASE_MS)),
    "lease_many_100": (_ready(100), lambda q, _, k: q.lease_many(count=100, lease_ms=LEASE_MS)),
    "complete": (_held(False), lambda q, held, k: q.complete(held[k])),  # type: ignore[index]
    "complete_and_lease": (_held(False), _drain),
    "complete_and_lease_policy": (_held(True), _drain),
    "renew": (_held(False), lambda q, held, k: q.renew(held[k], LEASE_MS)),  # type: ignore[index]
    "release": (_held(False), lambda q, held, k: q.release(held[k])),  # type: ignore[index]
    "fail_policy": (_held(True), lambda q, held, k: q.fail(held[k], "boom")),  # type: ignore[index]
    "light_clean_100_held": (lambda q, n: _held(False)(q, 100), lambda q, _, k: q.light_clean(chunk=100)),
}
SCENARIOS.update(
    {
        f"{name}_stats": _stats(SCENARIOS[name])
        for name in ("add", "add_many_100", "complete", "complete_and_lease", "fail_policy")
    }
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _use_revision(rev: str) -> None:
    """Make the client run the canonical scripts of git revision ``rev`` (a script the revision
    lacks, such as ``stats`` before profile stats, stays as it is now)."""
    for name in SCRIPT_NAMES:
        shown = subprocess.run(["git", "show", f"{rev}:lua/{name}.lua"], check=False, capture_output=True)
        if shown.returncode == 0:
            registry()[name] = Script(name, shown.stdout, hashlib.sha1(shown.stdout).hexdigest())


def measure(calls: int, scripts_only: bool = False) -> dict[str, int]:
    """Instructions per call of each scenario, on a callgrind'ed redis-server of its own;
    ``scripts_only`` counts only what runs inside ``EVAL``/``EVALSHA`` (evalGenericCommand), so
    that the server's timers (serverCron), whose share grows with the machine's load, and the
    network do not move the figure."""
    out = Path(tempfile.mkdtemp(prefix="rwq-instructions-"))
    port = _free_port()
    valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg.%p", "--instr-atstart=no"]
    if scripts_only:
        valgrind += ["--collect-atstart=no", "--toggle-collect=evalGenericCommand"]
    server = subprocess.Popen(
        [*valgrind, "redis-server", "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    try:
        for _ in range(300):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.1)
        figures = {}
        for name, (setup, run) in SCENARIOS.items():
            client.flushall()
            q = WorkQueue(client, "bench")
            state = setup(q, calls)
            run(q, state, 0)  # the script loaded and warm
            control = ["callgrind_control"]
            subprocess.run([*control, "-z", str(server.pid)], check=True, capture_output=True)
            subprocess.run([*control, "-i", "on", str(server.pid)], check=True, capture_output=True)
            for k in range(1, calls):
                run(q, state, k)
            subprocess.run([*control, "-i", "off", str(server.pid)], check=True, capture_output=True)
            subprocess.run([*control, "-d", name, str(server.pid)], check=True, capture_output=True)
            dump = max(out.glob("cg.*.*"), key=lambda p: p.stat().st_mtime)
            totals = next(line for line in dump.read_text().splitlines() if line.startswith("totals:"))
            figures[name] = int(totals.split()[1]) // (calls - 1)
        return figures
    finally:
        server.terminate()
        server.wait(timeout=60)
        shutil.rmtree(out, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    """Print instructions per call of each scenario (and of ``--against``'s scripts)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", metavar="REV", help="also measure the scripts of this git revision")
    parser.add_argument("--calls", type=int, default=400, help="calls per scenario (default 400)")
    parser.add_argument("--only", nargs="*", metavar="SCENARIO", help=f"a subset of {', '.join(SCENARIOS)}")
    parser.add_argument(
        "--scripts-only",
        action="store_true",
        help="count only inside EVAL/EVALSHA: no timers or network, steady under load",
    )
    args = parser.parse_args(argv)
    for name in set(SCENARIOS) - set(args.only or SCENARIOS):
        del SCENARIOS[name]
    if not shutil.which("valgrind") or not shutil.which("callgrind_control"):
        print("bench.instructions: valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    now = measure(args.calls, args.scripts_only)
    before = None
    if args.against:
        _use_revision(args.against)
        before = measure(args.calls, args.scripts_only)
    print(
        f"{'scenario':28} {'instructions/call':>18}"
        + (f" {args.against[:12]:>14} {'change':>8}" if before else "")
    )
    for name, value in now.items():
        line = f"{name:28} {value:>18,}"
        if before:
            line += f" {before[name]:>14,} {100 * (value - before[name]) / before[name]:>7.1f}%"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
