"""Where a client call spends its time: cProfile of the hot loops, grouped by layer.

``python -m bench.profile [--n 5000]`` prints microseconds per item for each layer (rwq's plans,
rwq's shell, redis-py command packing, reply parsing, other redis-py code, socket calls). cProfile
slows Python code down, so compare layers and loops with each other, not with ``python -m bench``.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.core import LEASE_MS, make_ids, payload
from bench.peers.rwq_peers import _drain, _drain_lean
from rwq import WorkQueue
from rwq.conformance.redis_server import RedisServer
from rwq.protocol.scripts import registry

LAYERS = (
    ("rwq plans", ("/rwq/protocol/",)),
    ("rwq shell", ("/rwq/client.py", "/rwq/_shell.py")),
    ("redis-py pack", ("redis/connection.py:pack", "redis/_parsers/encoders.py")),
    ("redis-py parse", ("redis/_parsers/",)),
    ("redis-py other", ("/redis/",)),
    ("socket", ("_socket.socket",)),
)


def _layer(func: tuple[str, int, str]) -> str:
    filename, _line, name = func
    where = f"{filename}:{name}"
    for layer, needles in LAYERS:
        if any(needle in where for needle in needles):
            return layer
    return "other"


def profile(loop: Callable[[], Any], n: int) -> dict[str, float]:
    """Microseconds of own time per item in each layer while ``loop`` runs."""
    profiler = cProfile.Profile()
    profiler.enable()
    loop()
    profiler.disable()
    stats: dict[Any, Any] = getattr(pstats.Stats(profiler), "stats")  # noqa: B009 - untyped attribute
    out = dict.fromkeys([layer for layer, _ in LAYERS] + ["other"], 0.0)
    for func, (_cc, _nc, tottime, _cum, _callers) in stats.items():
        out[_layer(func)] += tottime / n * 1e6
    out["total"] = sum(out.values())
    return out


def main(argv: list[str] | None = None) -> int:
    """Profile enqueue and drain loops of raw redis-py and rwq on a private Redis."""
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=5000)
    n = parser.parse_args(argv).n
    data = payload()
    rows: dict[str, dict[str, float]] = {}
    with RedisServer() as server:
        r = server.client()
        wq = WorkQueue(r, "prof")
        for script in registry().values():
            r.script_load(script.source)
        ids = make_ids(n)
        add_sha = registry()["add"].sha1

        def fill() -> None:
            r.flushall()
            for start in range(0, n, 1000):
                wq.add_many([(item_id, data) for item_id in ids[start : start + 1000]])

        def raw_drain() -> None:
            for _ in range(n):
                value = r.lmove("raw:q", "raw:p", "RIGHT", "LEFT")
                r.lrem("raw:p", -1, value)  # type: ignore[arg-type]

        loops: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
            ("raw LPUSH", r.flushall, lambda: [r.lpush("raw:q", data) for _ in ids]),
            ("rwq add", r.flushall, lambda: [wq.add(item_id, data) for item_id in ids]),
            (
                "lean add (evalsha)",
                r.flushall,
                lambda: [r.evalsha(add_sha, 1, wq.keys.queue, 0, item_id, data) for item_id in ids],
            ),
            ("raw LMOVE+LREM", lambda: r.lpush("raw:q", *[data] * n), raw_drain),
            ("rwq complete_and_lease", fill, lambda: _drain(wq, 1, n)),
            ("lean complete_and_lease", fill, lambda: _drain_lean(wq, r, 1, n)),
        ]
        for name, setup, loop in loops:
            setup()
            rows[name] = profile(loop, n)
        r.close()
    table = Table(title=f"own time per item, us (cProfile, n={n}, lease_ms={LEASE_MS})")
    columns = [layer for layer, _ in LAYERS] + ["other", "total"]
    table.add_column("loop")
    for column in columns:
        table.add_column(column, justify="right")
    for name, row in rows.items():
        table.add_row(name, *(f"{row[column]:.1f}" for column in columns))
    Console(width=200).print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
