"""What each canonical script costs inside Redis on its common paths: commands and microseconds.

``python -m bench.counts`` runs each scenario of ``SCENARIOS`` on a private Redis and prints, per
script call, the commands the script ran (read from ``MONITOR``: its ``[0 lua]`` lines, exact) and
the microseconds they took (``INFO commandstats``, averaged over ``--repeats`` calls: a figure, not
a test). ``--write`` stores the counts in ``lua/command-counts.json``, the ceiling that
``tests/test_command_counts.py`` holds every script to: a change to that file is a change of cost,
reviewed as such.
"""

from __future__ import annotations

import argparse
import json
import socket
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from rwq import RetryPolicy, WorkQueue
from rwq.conformance.redis_server import RedisServer
from rwq.conformance.wire import parse_line
from rwq.protocol.periodic import Schedule
from rwq.protocol.scripts import registry

COUNTS_FILE = Path(__file__).resolve().parent.parent / "lua" / "command-counts.json"
LEASE_MS = 60_000


def _items(n: int, start: int = 0) -> list[tuple[str, bytes]]:
    return [(f"i{k}", b"x" * 100) for k in range(start, start + n)]


@dataclass(frozen=True)
class Scenario:
    """A common path: ``setup`` brings a fresh database to the state, ``run`` makes one client
    call of ``script`` (the one measured), which works on ``items`` items."""

    name: str
    script: str
    items: int
    setup: Callable[[WorkQueue], object]
    run: Callable[[WorkQueue, object], object]


def _held(n: int, queued: int, policy: bool = False) -> Callable[[WorkQueue], object]:
    """Setup: ``n`` items leased and ``queued`` more ready (with a retry policy if asked)."""

    def setup(q: WorkQueue) -> object:
        if policy:
            q.set_retry_policy(RetryPolicy(max_attempts=5))
        q.add_many(_items(n + queued))
        return q.lease_many(count=n, lease_ms=LEASE_MS) if n else []

    return setup


_RECORD = {"kind": "worker", "host": "h", "pid": 1, "in_hand": 1, "items": ["i0"], "completed": 10}
_BEAT = ("me", 30_000, _RECORD)


def _beating(live: int, *, expired: int) -> Callable[[WorkQueue], object]:
    """Setup (profile workers): ``live`` workers beating, and ``expired`` entries past their deadline."""

    def setup(q: WorkQueue) -> object:
        for n in range(live):
            q.worker_beat(f"w{n}", 30_000, _RECORD)
        if expired:
            client: Any = q._redis
            client.zadd(f"{q.prefix}:workers:seen", {f"x{n}": 1 for n in range(expired)})
            client.hset(f"{q.prefix}:workers", mapping={f"x{n}": "{}" for n in range(expired)})
        return None

    return setup


def _stats(setup: Callable[[WorkQueue], object], *counters: str) -> Callable[[WorkQueue], object]:
    """Setup (profile stats): ``setup`` on a queue whose stats are on, the fields of ``counters``
    already written in this minute and the next (a count's common path: no trim, whenever the
    measured call runs)."""

    def with_stats(q: WorkQueue) -> object:
        q.enable_stats()
        client: Any = q._redis
        seconds, micros = client.time()
        minute = (int(seconds) * 1000 + int(micros) // 1000) // 60_000
        fields = {f"{m}:{counter}": 1 for m in (minute, minute + 1) for counter in counters}
        client.hset(f"{q.prefix}:stats:series", mapping={**fields, "trimmed": minute - 61})
        return setup(q)

    return with_stats


def _scheduled(count: int) -> Callable[[WorkQueue], object]:
    """Setup (profile periodic): ``count`` schedules every second; schedule s0 has its slot of
    the current second due (its watermark one slot before). Returns s0's digest and that slot."""

    def setup(q: WorkQueue) -> object:
        for n in range(count):
            q.put_schedule(f"s{n}", Schedule.every(1000), b"payload")
        client: Any = q._redis
        seconds, _micros = client.time()
        slot = int(seconds) * 1000
        client.hset(f"{q.prefix}:schedules:fired", "s0", slot - 1000)
        return q.schedules().schedules[0].digest, slot

    return setup


def _fire(q: WorkQueue, due: object) -> object:
    assert isinstance(due, tuple)
    digest, slot = due
    return q.fire("s0", str(digest), [int(slot)])


SCENARIOS = (
    Scenario("add", "add", 1, lambda q: None, lambda q, _: q.add("new", b"x" * 100)),
    Scenario("add_many_100", "add", 100, lambda q: None, lambda q, _: q.add_many(_items(100, 1000))),
    Scenario("lease", "lease", 1, _held(0, 200), lambda q, _: q.lease(LEASE_MS)),
    Scenario(
        "lease_many_100", "lease", 100, _held(0, 200), lambda q, _: q.lease_many(count=100, lease_ms=LEASE_MS)
    ),
    Scenario("lease_policy", "lease", 1, _held(0, 200, policy=True), lambda q, _: q.lease(LEASE_MS)),
    Scenario("complete", "complete", 1, _held(1, 10), lambda q, held: q.complete(held[0])),  # type: ignore[index]
    Scenario(
        "complete_and_lease",
        "complete_and_lease",
        1,
        _held(1, 200),
        lambda q, held: q.complete_and_lease(held[0], LEASE_MS),  # type: ignore[index]
    ),
    Scenario(
        "complete_and_lease_many_100",
        "complete_and_lease",
        100,
        _held(100, 200),
        lambda q, held: q.complete_and_lease_many(held, 100, LEASE_MS),  # type: ignore[arg-type]
    ),
    Scenario(
        "complete_and_lease_policy",
        "complete_and_lease",
        1,
        _held(1, 200, policy=True),
        lambda q, held: q.complete_and_lease(held[0], LEASE_MS),  # type: ignore[index]
    ),
    Scenario("renew", "renew", 1, _held(1, 10), lambda q, held: q.renew(held[0], LEASE_MS)),  # type: ignore[index]
    Scenario("release", "release", 1, _held(1, 10), lambda q, held: q.release(held[0])),  # type: ignore[index]
    Scenario(
        "fail",
        "fail",
        1,
        _held(1, 10, policy=True),
        lambda q, held: q.fail(held[0], "boom"),  # type: ignore[index]
    ),
    Scenario("light_clean_100", "light_clean", 100, _held(100, 10), lambda q, _: q.light_clean(chunk=100)),
    Scenario("add_stats", "add", 1, _stats(lambda q: None, "added"), lambda q, _: q.add("new", b"x" * 100)),
    Scenario(
        "complete_and_lease_stats",
        "complete_and_lease",
        1,
        _stats(_held(1, 200), "completed"),
        lambda q, held: q.complete_and_lease(held[0], LEASE_MS),  # type: ignore[index]
    ),
    Scenario(
        "fail_stats",
        "fail",
        1,
        _stats(_held(1, 10, policy=True), "failed"),
        lambda q, held: q.fail(held[0], "boom"),  # type: ignore[index]
    ),
    Scenario("stats_read", "stats", 61, _stats(lambda q: None, "added"), lambda q, _: q.stats()),
    Scenario("heartbeat_beat", "heartbeat", 1, _beating(10, expired=0), lambda q, _: q.worker_beat(*_BEAT)),
    Scenario(
        "heartbeat_beat_trim_100",
        "heartbeat",
        1,
        _beating(10, expired=100),
        lambda q, _: q.worker_beat(*_BEAT),
    ),
    Scenario(
        "heartbeat_list_100", "heartbeat", 100, _beating(100, expired=0), lambda q, _: q.workers(count=100)
    ),
    Scenario("fire", "fire", 1, _scheduled(1), _fire),
    Scenario("fire_stats", "fire", 1, _stats(_scheduled(1), "added"), _fire),
    Scenario("schedule_list_100", "schedule", 100, _scheduled(100), lambda q, _: q.schedules()),
    Scenario(
        "schedule_put",
        "schedule",
        1,
        lambda q: None,
        lambda q, _: q.put_schedule("s", Schedule.every(1000), b"p"),
    ),
)


class _Monitor:
    """A raw MONITOR connection; ``commands`` reads what ran up to now."""

    def __init__(self, server: RedisServer) -> None:
        self._server = server
        self._sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        self._sock.sendall(b"MONITOR\r\n")
        if self._sock.recv(5) != b"+OK\r\n":
            raise RuntimeError("MONITOR was refused")

    def commands(self, script_sha: bytes) -> Counter[str]:
        """The commands the first call of the script ``script_sha`` ran, by name."""
        marker = b"rwq-command-counts-end"
        self._server.client().echo(marker)
        buffer = b""
        while marker not in buffer:
            chunk = self._sock.recv(1 << 16)
            if not chunk:
                raise RuntimeError("MONITOR closed")
            buffer += chunk
        self._sock.close()
        counted, calls, inside = Counter[str](), 0, False  # calls: of the script, up to this one
        for line in buffer.split(b"\r\n"):
            seen = parse_line(line + b"\r\n")
            if seen is None:
                continue
            if seen.client != "lua":
                inside = seen.name == b"EVALSHA" and seen.args[1].lower() == script_sha and calls == 0
                calls += inside
            elif inside:
                counted[seen.name.decode()] += 1
        if calls != 1:
            raise RuntimeError("the scenario did not call its script")
        return counted


def _fresh(server: RedisServer, client: redis.Redis) -> WorkQueue:
    client.flushall()
    queue = WorkQueue(client, "q")
    for script in registry().values():
        client.script_load(script.source)
    return queue


def count(server: RedisServer, scenario: Scenario) -> Counter[str]:
    """The commands one call of the scenario's script runs, by name, read from MONITOR."""
    client = server.client()
    queue = _fresh(server, client)
    state = scenario.setup(queue)
    monitor = _Monitor(server)
    scenario.run(queue, state)
    return monitor.commands(registry()[scenario.script].sha1.encode())


def microseconds(server: RedisServer, scenario: Scenario, repeats: int) -> tuple[float, float]:
    """Microseconds per call inside the script's commands, and of the whole script call
    (``INFO commandstats``; the mean over ``repeats`` calls, each on a fresh state)."""
    client = server.client()
    inside = whole = 0.0
    for _ in range(repeats):
        queue = _fresh(server, client)
        state = scenario.setup(queue)
        client.config_resetstat()
        scenario.run(queue, state)
        for name, stats in client.info("commandstats").items():
            command = name.removeprefix("cmdstat_")
            if command in ("evalsha", "eval"):
                whole += stats["usec"]
            elif command not in ("config", "info"):
                inside += stats["usec"]
    return inside / repeats, whole / repeats


def measure(server: RedisServer) -> dict[str, Counter[str]]:
    """Every scenario's commands per call, by command name."""
    return {scenario.name: count(server, scenario) for scenario in SCENARIOS}


def stored() -> dict[str, Any]:
    """The counts stored in ``lua/command-counts.json``, by scenario name: the script, the items
    of the call, the commands and the commands by name."""
    data: dict[str, Any] = json.loads(COUNTS_FILE.read_text())["scenarios"]
    return data


def write(counts: dict[str, Counter[str]]) -> None:
    """Store ``counts`` as the ceiling."""
    rows = {
        scenario.name: {
            "script": scenario.script,
            "items": scenario.items,
            "commands": counts[scenario.name].total(),
            "by_command": dict(sorted(counts[scenario.name].items())),
        }
        for scenario in SCENARIOS
    }
    text = {
        "description": "Redis commands each canonical script runs on its common paths "
        "(python -m bench.counts --write; bench/counts.py names the scenarios). "
        "tests/test_command_counts.py fails when a count differs: a change here is a change of "
        "cost, reviewed as such.",
        "scenarios": rows,
    }
    COUNTS_FILE.write_text(json.dumps(text, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Print commands and microseconds per script call; ``--write`` stores the counts."""
    parser = argparse.ArgumentParser(prog="python -m bench.counts", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=200, help="calls averaged for the microseconds")
    parser.add_argument("--write", action="store_true", help="store the counts in lua/command-counts.json")
    args = parser.parse_args(argv)
    with RedisServer() as server:
        counts = measure(server)
        print(
            f"{'scenario':30} {'cmds/call':>9} {'cmds/item':>9} {'us in cmds':>10} {'us/call':>8}  by command"
        )
        for scenario in SCENARIOS:
            counted = counts[scenario.name]
            inside, whole = microseconds(server, scenario, args.repeats)
            total = counted.total()
            by = " ".join(f"{name}={n}" for name, n in sorted(counted.items()))
            per_item = total / scenario.items
            print(f"{scenario.name:30} {total:9d} {per_item:9.2f} {inside:10.1f} {whole:8.1f}  {by}")
    if args.write:
        write(counts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
