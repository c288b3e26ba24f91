"""The ``make bench`` entry point: start a private Redis, measure every peer, write and print results.

Usage (from the repository root)::

    .venv/bin/python -m bench [--quick] [--n N] [--repeats R] [--peers raw,rwq,...]
                              [--only drain,wake,...] [--out bench-out]
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import platform
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from rich.console import Console

from bench import golang, history, typescript
from bench.core import Bench, Config
from bench.peers import PEERS, peer_class
from bench.peers.base import Peer
from bench.proto import CLAIM_HEAD
from bench.report import document, print_history, print_tables, validate
from bench.scenarios import Scenarios, run_all
from bench.targets import evaluate
from rwq.conformance.redis_server import RedisServer

PACKAGES = ("rwq", "redis", "hiredis", "redis-work-queue", "bullmq", "rq")


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run, under a minute")
    parser.add_argument("--n", type=int, help="jobs per throughput measurement (default 20000)")
    parser.add_argument("--repeats", type=int, help="runs per peer and measurement; the best counts")
    parser.add_argument("--peers", help=f"comma-separated subset of {','.join(PEERS)}")
    parser.add_argument("--only", help="comma-separated measurement prefixes (enqueue,drain,wake,scale...)")
    parser.add_argument("--out", type=Path, default=Path("bench-out"), help="directory for the JSON result")
    return parser.parse_args(argv)


def _config(args: argparse.Namespace) -> Config:
    peers = tuple(args.peers.split(",")) if args.peers else tuple(PEERS)
    unknown = set(peers) - set(PEERS)
    if unknown:
        raise SystemExit(f"unknown peers: {', '.join(sorted(unknown))}")
    config = Config.quick_mode(peers) if args.quick else Config(peers=peers)
    changes: dict[str, Any] = {}
    if args.n:
        changes["n"] = args.n
    if args.repeats:
        changes["repeats"] = args.repeats
    return dataclasses.replace(config, **changes) if changes else config


def _versions() -> dict[str, str]:
    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def _open_peers(bench: Bench, names: tuple[str, ...], console: Console) -> dict[str, Peer]:
    peers: dict[str, Peer] = {}
    for name in names:
        try:
            peer = peer_class(name)(bench)
            peer.warm_up(b"warm-up payload")
        except Exception as exc:
            console.print(f"[yellow]peer {name} unavailable: {type(exc).__name__}: {exc}[/yellow]")
            continue
        peers[name] = peer
    return peers


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; 0 when it completed (missed targets are results, not failures)."""
    args = _parse(argv)
    config = _config(args)
    console = Console(stderr=True)
    started = time.monotonic()
    started_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    load_before = os.getloadavg()
    with RedisServer() as server:
        bench = Bench(server)
        peers = _open_peers(bench, config.peers, console)
        if "raw" not in peers:
            console.print("[red]the raw redis-py baseline is required[/red]")
            return 2
        scenarios = Scenarios(bench, config, peers, console.print)
        only = tuple(args.only.split(",")) if args.only else ()
        measurements = run_all(scenarios, only)
        redis_version = str(bench.info()["redis_version"])
        for peer in peers.values():
            peer.close()
    environment = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count() or 0,
        "redis_server": redis_version,
        "packages": _versions(),
        "loadavg_before": list(load_before),
        "loadavg_after": list(os.getloadavg()),
        "started_at": started_at,
        "duration_s": round(time.monotonic() - started, 1),
    }
    doc = document(
        measurements,
        evaluate(measurements),
        dataclasses.asdict(config),
        environment,
        {name: peer.label for name, peer in peers.items()}
        | (golang.LABELS if any(m.results for m in measurements if m.baseline == golang.RAW) else {})
        | (typescript.LABELS if any(m.results for m in measurements if m.baseline == typescript.RAW) else {}),
    )
    doc = json.loads(json.dumps(doc))  # tuples become lists, as a reader will see them
    validate(doc)
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = args.out / f"bench-{'quick-' if config.quick else ''}{stamp}.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    (args.out / f"{CLAIM_HEAD.name}.lua").write_bytes(CLAIM_HEAD.source)
    out = Console()
    if not out.is_terminal:
        out = Console(width=200)
    print_tables(out, doc, path.resolve())
    stored, earlier, worse = history.record(doc, config.quick, stamp)
    print_history(out, stored, earlier, worse)
    return 0
