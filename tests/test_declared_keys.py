"""Profile declared-keys (SPEC §20): the call shapes of the sans-IO core, and both clients on a
real Redis, every command their scripts run checked through MONITOR against the call's KEYS."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import redis.asyncio as aioredis
from click.testing import CliRunner

from rwq import AsyncWorkQueue, RetryPolicy, WorkQueue
from rwq.cli import cli
from rwq.conformance.environment import raw_client
from rwq.conformance.redis_server import RedisServer
from rwq.conformance.wire import CommandTable, Seen, parse_line
from rwq.errors import InvalidType
from rwq.protocol import declared
from rwq.protocol import operations as ops
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import QueueKeys
from rwq.protocol.scripts import lua_dir, registry

KEYS = QueueKeys("jobs")
P = b"jobs:"
TRIPLE = (b"item:", b"lease:", b"leased_by_session:")


def triple(item_id: bytes) -> tuple[bytes, ...]:
    return tuple(P + kind + item_id for kind in TRIPLE)


def first(plan: Plan[object]) -> RunScript:
    command = next(plan)
    assert isinstance(command, RunScript)
    return command


# -- the call shapes ------------------------------------------------------------------------------


def test_declared_names_are_the_headers() -> None:
    assert declared.declared_names(registry()["add"]) == (
        b"dead",
        b"delayed",
        b"delayed:data",
        b"stats",
        b"stats:series",
    )
    assert declared.declared_names(registry()["ring"]) == ()
    lease = declared.declared_names(registry()["lease"])
    assert declared.declared_names(registry()["complete_and_lease"]) == lease
    assert set(declared.declared_names(registry()["complete"])) <= set(lease)
    for script in registry().values():  # every name is a key of the layout, once
        names = declared.declared_names(script)
        assert len(set(names)) == len(names)
        text = (lua_dir() / f"{script.name}.lua").read_text()
        assert all(f"'{name.decode()}'" in text for name in names), script.name


def test_a_named_call_declares_its_ids_once_after_the_declared_keys() -> None:
    command = first(ops.add(KEYS, [("a", b"A"), ("b", b"B"), ("a", b"again")], delay_ms=0))
    keys = declared.with_declared_keys(command, ()).keys
    assert keys == (
        P + b"queue",
        P + b"dead",
        P + b"delayed",
        P + b"delayed:data",
        P + b"stats",
        P + b"stats:series",
        *triple(b"a"),
        *triple(b"b"),
    )


@pytest.mark.parametrize(
    ("plan", "ids"),
    [
        (ops.renew(KEYS, [ops.Lease("a", b"", "t"), ops.Lease("b", b"", "t")], 1000), [b"a", b"b"]),
        (ops.complete(KEYS, ["a", "b"]), [b"a", b"b"]),
        (ops.complete(KEYS, [ops.Lease("a", b"", "t")], require_lease=True), [b"a"]),
        (ops.release(KEYS, [ops.Lease("a", b"", "t")]), [b"a"]),
        (ops.fail(KEYS, ops.Lease("a", b"", "t"), "x"), [b"a"]),
        (ops.complete_and_lease(KEYS, ["a", "b"], 1000), [b"a", b"b"]),
        (ops.complete_and_lease(KEYS, [ops.Lease("a", b"", "t")], 1000, require_lease=True), [b"a"]),
        (ops.dead_action(KEYS, "requeue", ["a"]), [b"a"]),
        (ops.dead_action(KEYS, "purge", ["a"]), []),
        (ops.counts(KEYS), []),
        (ops.lease(KEYS, 1000, count=5), []),
    ],
)
def test_every_id_a_call_names_is_declared(plan: Plan[object], ids: list[bytes]) -> None:
    command = first(plan)
    names = declared.declared_names(command.script)
    keys = declared.with_declared_keys(command, ()).keys
    core = len(command.keys)
    assert keys[:core] == command.keys
    assert keys[core : core + len(names)] == tuple(P + name for name in names)
    assert keys[core + len(names) :] == tuple(key for item_id in ids for key in triple(item_id))


def test_a_finding_call_declares_its_window_and_the_reply_loses_it() -> None:
    command = first(ops.lease(KEYS, 1000, count=2))
    assert declared.window_kind(command) == b"lease"
    keys = declared.with_declared_keys(command, (b"x", b"y")).keys
    assert keys[-6:] == (*triple(b"x"), *triple(b"y"))
    reply = [1, 5, -1, [b"z"], [b"x", b"X", 0]]
    assert declared.split_window("lease", reply) == ([1, 5, -1, [b"x", b"X", 0]], (b"z",))
    composite = [[1], [0, 5, -1, [b"q"]]]
    assert declared.split_window("complete_and_lease", composite) == ([[1], [0, 5, -1]], (b"q",))
    assert declared.split_window("light_clean", [3, [], 0, [], 0, [b"w"]]) == ([3, [], 0, [], 0], (b"w",))
    assert declared.split_window("deep_clean", [-1, 2, []]) == ([-1, 2], ())


def test_window_kinds() -> None:
    clean = first(ops.light_clean(KEYS))
    assert declared.window_kind(clean) == b"light_clean"
    deep_plan = ops.deep_clean(KEYS)
    assert next(deep_plan).args[0] == "SCAN"  # before anything is written (RWQ-SEC-006)
    deep = deep_plan.send((0, []))
    assert isinstance(deep, RunScript)
    assert declared.window_kind(deep) == b"deep_clean:queue"
    assert declared.window_kind(first(ops.counts(KEYS))) is None


def test_the_setting_is_a_flag(r: redis.Redis) -> None:
    with pytest.raises(InvalidType):
        WorkQueue(r, "jobs", declared_keys="yes")  # type: ignore[arg-type]
    assert WorkQueue(r, "jobs").declared_keys is False  # off unless asked (RWQ-DECL-005)


# -- both clients on a real Redis, traced ---------------------------------------------------------


class Monitor:
    """A raw MONITOR connection: every command the server runs, scripts' commands included."""

    def __init__(self, server: RedisServer) -> None:
        self._sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        self._sock.sendall(b"MONITOR\r\n")
        assert self._sock.recv(5) == b"+OK\r\n"
        self._marker = b"declared-keys-test-end"
        self._server = server

    def lines(self) -> list[Seen]:
        """The commands seen up to now (a marker ECHO ends the read)."""
        self._server.client().echo(self._marker)
        buffer = b""
        while self._marker not in buffer:
            chunk = self._sock.recv(1 << 16)
            assert chunk, "MONITOR closed"
            buffer += chunk
        self._sock.close()
        return [seen for line in buffer.split(b"\r\n") if (seen := parse_line(line + b"\r\n")) is not None]


def undeclared_touches(lines: list[Seen], table: CommandTable) -> tuple[int, list[str]]:
    """How many script calls ran, and each command a script ran on a key its call did not declare."""
    calls, found, declared_keys = 0, [], set[bytes]()
    for seen in lines:
        if seen.client != "lua" and seen.name in (b"EVALSHA", b"EVAL"):
            calls += 1
            declared_keys = set(seen.args[3 : 3 + int(seen.args[2])])
        elif seen.client == "lua":
            found += [f"{seen.args!r}" for key in table.keys(seen.args) if key not in declared_keys]
    return calls, found


@pytest.fixture(scope="module")
def table(redis_server: RedisServer) -> CommandTable:
    client = raw_client(redis_server.url)
    version = client.execute_command("INFO", "server").decode().split("redis_version:")[1].split()[0]
    return CommandTable(client, version)


def every_operation(queue: WorkQueue) -> Iterator[str]:
    """Every operation of the queue, once at least; yields what it checked."""
    queue.set_retry_policy(RetryPolicy(max_attempts=1, backoff="fixed", base_ms=0))
    assert queue.add_many([(f"i{n}", b"x") for n in range(30)]) == [True] * 30
    assert queue.add("later", b"L", delay_ms=1) is True
    held = queue.lease(30_000)
    assert held is not None
    assert held.id == "i0"
    assert queue.renew(held, 60_000) is True
    _outcomes, more = queue.complete_and_lease_many([held], 3, 30_000)
    assert [lease.id for lease in more] == ["i1", "i2", "i3"]
    assert queue.release(more[0], refund_attempt=True) is True  # i1 keeps its one attempt
    assert queue.fail(more[1], "boom", delay_ms=0, fallback_delay_ms=1000, detail="tb").outcome.name == "DEAD"
    assert queue.requeue_dead(["i2"]) == [True]
    assert queue.complete(more[2]) is True
    leased = queue.lease_many(count=40, lease_ms=1)
    assert len(leased) == 29  # i1, i2 (requeued), i4..i29, later (promoted)
    time.sleep(0.01)
    report = queue.light_clean(chunk=7)
    assert sorted(report.dead) == sorted(lease.id for lease in leased)  # one attempt each, used up
    assert queue.deep_clean(chunk=5).requeued == ()
    assert queue.counts().dead == 29
    assert len(queue.dead_items(count=100)) == 29
    assert queue.purge_dead(["i1"]) == [True]
    queue.set_retry_policy(None)
    assert queue.add("b", b"B") is True
    assert queue.lease(1000, block=True, timeout_ms=200) is not None
    yield "ok"


def test_the_sync_client_declares_every_key_it_touches(
    redis_server: RedisServer, table: CommandTable
) -> None:
    client = redis_server.client()
    client.flushall()
    monitor = Monitor(redis_server)
    assert list(every_operation(WorkQueue(client, "jobs", declared_keys=True))) == ["ok"]
    calls, found = undeclared_touches(monitor.lines(), table)
    assert calls > 20
    assert found == []


def test_without_the_profile_scripts_touch_undeclared_keys(
    redis_server: RedisServer, table: CommandTable
) -> None:
    """The trace check can fail: the core call shapes build keys inside the scripts."""
    client = redis_server.client()
    client.flushall()
    monitor = Monitor(redis_server)
    assert list(every_operation(WorkQueue(client, "jobs"))) == ["ok"]
    _calls, found = undeclared_touches(monitor.lines(), table)
    assert len(found) > 20


async def test_the_async_client_declares_every_key_it_touches(
    redis_server: RedisServer, table: CommandTable
) -> None:
    client = aioredis.Redis(host="127.0.0.1", port=redis_server.port)
    await client.flushall()
    monitor = Monitor(redis_server)
    queue = AsyncWorkQueue(client, "jobs", declared_keys=True)
    assert await queue.add_many([(f"i{n}", b"x") for n in range(10)]) == [True] * 10
    held = await queue.lease(30_000)
    assert held is not None
    _done, more = await queue.complete_and_lease_many([held], 4, 30_000)
    assert [lease.id for lease in more] == ["i1", "i2", "i3", "i4"]
    assert await queue.release_many(more) == [ops.Outcome.DONE] * 4
    assert len(await queue.lease_many(count=20, lease_ms=1)) == 9
    await asyncio.sleep(0.01)
    assert len((await queue.light_clean(chunk=2)).requeued) == 9
    assert (await queue.deep_clean(chunk=3)).requeued == ()
    await client.aclose()
    calls, found = await asyncio.to_thread(lambda: undeclared_touches(monitor.lines(), table))
    assert calls > 8
    assert found == []


def test_a_stale_window_costs_one_call_and_no_item(redis_server: RedisServer) -> None:
    """Two consumers on one queue: each lease declares the window of its previous reply; ids the
    other consumer took make it stale, and the lease then calls again with the fresh one."""
    client = redis_server.client()
    client.flushall()
    producer = WorkQueue(client, "jobs")
    producer.add_many([(f"i{n:03}", b"x") for n in range(300)])
    got: list[str] = []
    lock = threading.Lock()

    def consume() -> None:
        queue = WorkQueue(redis_server.client(), "jobs", declared_keys=True)
        while (lease := queue.lease(30_000)) is not None:
            with lock:
                got.append(lease.id)

    threads = [threading.Thread(target=consume) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(got) == [f"i{n:03}" for n in range(300)]


def test_the_fragment_is_in_every_script_that_declares() -> None:
    fragment = next(
        line
        for line in (lua_dir() / "fragments" / "declared_keys.lua").read_text().splitlines()
        if "local declared_names" in line
    )
    for script in registry().values():
        text = script.source.decode()
        assert (fragment.split("=")[0] in text) == bool(declared.declared_names(script)), script.name
    assert Path(lua_dir() / "ring.lua").read_text().count("declared") == 0


def test_the_lease_window_follows_the_other_consumers(r: redis.Redis) -> None:
    """The slack of a lease's window (SPEC §20): what the call declared beyond count, doubled when
    it stopped at an undeclared id, else one fewer; 1..64."""
    WorkQueue(r, "jobs").add_many([(f"i{n:03}", b"x") for n in range(300)])
    script = registry()["lease"]
    names = [P + name for name in declared.declared_names(script)]

    def lease(window: list[bytes]) -> tuple[int, int, list[bytes]]:
        keys = [P + b"queue", P + b"processing", *names, *(key for item in window for key in triple(item))]
        reply = r.evalsha(script.sha1, len(keys), *keys, 30_000, "tok", 1, "0", "0")
        return reply[0], len(reply) - 4, reply[3]

    again, leased, window = lease([])  # cold: nothing declared, stopped at once
    assert (again, leased, len(window)) == (1, 0, 2)
    again, leased, window = lease(window)  # declared 2: slack 1, one fewer, at least 1
    assert (again, leased, len(window)) == (0, 1, 2)
    again, leased, window = lease([*window, b"x1", b"x2", b"x3", b"x4", b"x5", b"x6", b"x7", b"x8"])
    assert (again, leased, len(window)) == (0, 1, 1 + 8)  # declared 10: slack 9, then 8
    again, leased, window = lease([b"elsewhere", b"x1", b"x2", b"x3", b"x4"])  # stale: stopped
    assert (again, leased, len(window)) == (1, 0, 1 + 8)  # declared 5: slack 4, doubled
    again, leased, window = lease([f"i{n:03}".encode() for n in range(300)])
    assert (again, leased, len(window)) == (0, 1, 1 + 64)  # at most 64


@pytest.mark.parametrize("handler", ["tasks:handle", "tasks:handle_async"])
def test_the_worker_and_operator_commands_take_the_profile(
    tmp_path: Path, redis_server: RedisServer, table: CommandTable, handler: str
) -> None:
    """``rwq worker --declared-keys`` and ``rwq clean --declared-keys``: every script call of
    theirs declares its keys; ``rwq clean`` without the flag does not (the check can fail)."""
    client = redis_server.client()
    client.flushall()
    WorkQueue(client, "jobs").add_many([(f"i{n}", b"x") for n in range(30)])
    (tmp_path / "tasks.py").write_text(
        "async def handle_async(job):\n    pass\n\ndef handle(job):\n    pass\n"
    )
    monitor = Monitor(redis_server)
    env = {**os.environ, "RWQ_URL": redis_server.url}
    worker = [sys.executable, "-m", "rwq.console", "worker", handler, "-q", "jobs", "--burst", "-c", "3"]
    done = subprocess.run(
        [*worker, "--declared-keys"], cwd=tmp_path, env=env, capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    clean = ["clean", "--prefix", "jobs", "--deep", "--url", redis_server.url]
    assert CliRunner().invoke(cli, [*clean, "--declared-keys"]).exit_code == 0
    calls, found = undeclared_touches(monitor.lines(), table)
    assert calls > 30
    assert found == []
    assert WorkQueue(client, "jobs").counts().queued == 0
    monitor = Monitor(redis_server)
    assert CliRunner().invoke(cli, clean).exit_code == 0
    assert undeclared_touches(monitor.lines(), table)[1] != []
