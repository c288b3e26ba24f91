"""The ACL roles of SPEC §13, each run on a real Redis: every role does its job on queue ``jobs``,
is refused the same operations on queue ``jobs:high``, and is refused everything else."""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import shlex
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis
from click.testing import CliRunner
from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]

from rwq import AsyncJob, AsyncWorker, AsyncWorkQueue, RetryPolicy, Schedule, Worker, WorkQueue
from rwq.cli import cli
from rwq.conformance.redis_server import RedisServer
from rwq.errors import (
    InvalidArgument,
    NoPermission,
    NotReplicated,
    PolicyMissing,
    RedisFailure,
    RwqError,
    ShardCountUnrecorded,
    ShardMismatch,
)
from rwq.protocol import acl
from rwq.protocol.operations import Lease
from rwq.protocol.scripts import registry
from rwq.sharded import AsyncShardedWorkQueue, ShardedWorkQueue
from rwq.worker import DEFAULT_RETRY

SPEC = Path(__file__).resolve().parents[1] / "SPEC.md"
LUA = Path(__file__).resolve().parents[1] / "lua"
QUEUE, OTHER = "jobs", "jobs:high"
PASSWORD = "secret"

Setup = Callable[[Any], Any]
Op = Callable[[Any, Any], Any]


def _held(queue: WorkQueue) -> Lease:
    queue.add("h", b"H")
    held = queue.lease(60_000)
    assert held is not None
    return held


def _dead(queue: WorkQueue) -> str:
    queue.set_retry_policy(RetryPolicy(max_attempts=1))
    queue.fail(_held(queue), "boom")
    return "h"


def _policied(queue: WorkQueue) -> Lease:
    queue.set_retry_policy(RetryPolicy(max_attempts=1))
    return _held(queue)


def command(client: Any, *args: Any) -> Any:
    """A raw command (redis-py leaves ``execute_command`` untyped)."""
    return client.execute_command(*args)


def _ready(queue: WorkQueue) -> None:
    queue.add("r", b"R")


def _due(queue: WorkQueue) -> None:
    """A delayed item that is due: a lease promotes it (a write) before it pops."""
    queue.add("d", b"D", delay_ms=1)
    time.sleep(0.005)


def _held_and_ready(queue: WorkQueue) -> Lease:
    held = _held(queue)
    _ready(queue)
    return held


def _held_and_due(queue: WorkQueue) -> Lease:
    held = _held(queue)
    _due(queue)
    return held


def _beating(queue: WorkQueue | ShardedWorkQueue) -> None:
    """A live worker w2 (profile workers, SPEC §21)."""
    queue.worker_beat("w2", 60_000, {"id": "w2"})


def _expired(queue: WorkQueue | ShardedWorkQueue) -> None:
    """Worker w2's deadline long past: the next beat removes it from both keys (of shard 0)."""
    _beating(queue)
    plain = queue.queues[0] if isinstance(queue, ShardedWorkQueue) else queue
    command(plain._redis, "ZADD", f"{plain.prefix}:workers:seen", 1, "w2")


def _stats_on(queue: WorkQueue | ShardedWorkQueue) -> None:
    """Stats on (profile stats, SPEC §22), with one count in the series."""
    queue.enable_stats()
    queue.add("s", b"S")


def _scheduled(queue: WorkQueue) -> None:
    """Schedule s (profile periodic, SPEC §23), every second."""
    queue.put_schedule("s", Schedule.every(1000), b"S")


def _paused(queue: WorkQueue) -> None:
    _scheduled(queue)
    queue.pause_schedule("s")


def _due_slot(queue: WorkQueue) -> tuple[str, int]:
    """Schedule s with a slot due now: its digest and that slot."""
    _scheduled(queue)
    seconds, _micros = queue._redis.time()
    slot = int(seconds) * 1000
    command(queue._redis, "HSET", f"{queue.prefix}:schedules:fired", "s", slot - 1000)
    return queue.schedules().schedules[0].digest, slot


OPERATIONS: dict[str, tuple[Setup, Op]] = {
    "add": (lambda q: None, lambda q, _: q.add("n", b"N")),
    "add_many delayed": (lambda q: None, lambda q, _: q.add_many([("d", b"D")], delay_ms=60_000)),
    "lease": (_ready, lambda q, _: q.lease(60_000)),
    "lease blocking": (_ready, lambda q, _: q.lease(60_000, block=True, timeout_ms=100)),
    "lease_many": (_ready, lambda q, _: q.lease_many(count=10, lease_ms=60_000)),
    "lease_visit": (_ready, lambda q, _: q.lease_visit(60_000)),
    "lease a due delayed item": (_due, lambda q, _: q.lease(60_000)),
    "renew": (_held, lambda q, held: q.renew(held, 60_000)),
    "renew_many": (_held, lambda q, held: q.renew_many([held], 60_000)),
    "complete": (_held, lambda q, held: q.complete(held, require_lease=True)),
    "complete_many": (_held, lambda q, held: q.complete_many([held])),
    "complete_and_lease": (_held, lambda q, held: q.complete_and_lease(held, 60_000)),
    "complete_and_lease, one ready": (_held_and_ready, lambda q, held: q.complete_and_lease(held, 60_000)),
    "complete_and_lease, one due": (_held_and_due, lambda q, held: q.complete_and_lease(held, 60_000)),
    "complete_and_lease_many": (
        _held_and_ready,
        lambda q, held: q.complete_and_lease_many([held], 2, 60_000),
    ),
    "release": (_held, lambda q, held: q.release(held, delay_ms=5)),
    "release_many": (_held, lambda q, held: q.release_many([held], delay_ms=5)),
    "fail": (_held, lambda q, held: q.fail(held, "boom")),
    "fail to dead": (_policied, lambda q, held: q.fail(held, "boom")),
    "counts": (lambda q: None, lambda q, _: q.counts()),
    "queue_len": (_ready, lambda q, _: q.queue_len()),
    "processing_len": (_held, lambda q, _: q.processing_len()),
    "light_clean": (_held, lambda q, _: q.light_clean()),
    "deep_clean": (_held, lambda q, _: q.deep_clean()),
    "dead_items": (_dead, lambda q, _: q.dead_items()),
    "dead_item": (_dead, lambda q, item_id: q.dead_item(item_id)),
    "requeue_dead": (_dead, lambda q, item_id: q.requeue_dead([item_id])),
    "purge_dead": (_dead, lambda q, item_id: q.purge_dead([item_id])),
    "retry_policy": (lambda q: None, lambda q, _: q.retry_policy()),
    "set_retry_policy": (lambda q: None, lambda q, _: q.set_retry_policy(RetryPolicy(max_attempts=3))),
    "clear retry policy": (_dead, lambda q, _: q.set_retry_policy(None)),
    "worker_beat": (lambda q: None, lambda q, _: q.worker_beat("w1", 30_000, {"id": "w1"})),
    "worker_beat, one expired": (_expired, lambda q, _: q.worker_beat("w1", 30_000, {"id": "w1"})),
    "worker_leave": (_beating, lambda q, _: q.worker_leave("w2")),
    "workers": (_beating, lambda q, _: q.workers()),
    "enable_stats": (lambda q: None, lambda q, _: q.enable_stats()),
    "disable_stats": (_stats_on, lambda q, _: q.disable_stats()),
    "stats": (_stats_on, lambda q, _: q.stats()),
    "put_schedule": (lambda q: None, lambda q, _: q.put_schedule("t", Schedule.every(60_000), b"T")),
    "put_schedule, replace": (_scheduled, lambda q, _: q.put_schedule("s", Schedule.every(2000))),
    "remove_schedule": (_scheduled, lambda q, _: q.remove_schedule("s")),
    "pause_schedule": (_scheduled, lambda q, _: q.pause_schedule("s")),
    "resume_schedule": (_paused, lambda q, _: q.resume_schedule("s")),
    "schedules": (_scheduled, lambda q, _: q.schedules()),
    "fire": (_due_slot, lambda q, due: q.fire("s", due[0], [due[1]])),
}
"""Every operation of the Python client: state made by an unrestricted client, then the call."""

SCHEDULING = {
    "put_schedule",
    "put_schedule, replace",
    "remove_schedule",
    "pause_schedule",
    "resume_schedule",
    "schedules",
}
"""The admin's jobs of profile periodic."""

JOBS: dict[str, set[str]] = {
    "producer": {"add", "add_many delayed"},
    "worker": {
        "lease",
        "lease blocking",
        "lease_many",
        "lease_visit",
        "lease a due delayed item",
        "renew",
        "renew_many",
        "complete",
        "complete_many",
        "complete_and_lease",
        "complete_and_lease, one ready",
        "complete_and_lease, one due",
        "complete_and_lease_many",
        "release",
        "release_many",
        "fail",
        "fail to dead",
        "worker_beat",
        "worker_beat, one expired",
        "worker_leave",
    },
    "operator": {
        "counts",
        "queue_len",
        "processing_len",
        "light_clean",
        "deep_clean",
        "dead_items",
        "dead_item",
        "requeue_dead",
        "purge_dead",
        "retry_policy",
        "workers",
        "stats",
        "schedules",
        "pause_schedule",
        "resume_schedule",
    },
    "admin": {
        "set_retry_policy",
        "clear retry policy",
        "retry_policy",
        "enable_stats",
        "disable_stats",
        "stats",
        *SCHEDULING,
    },
    "observer": {"counts", "queue_len", "processing_len", "workers", "stats", "schedules"},
    "scheduler": {"schedules", "fire", "worker_beat", "worker_beat, one expired", "worker_leave"},
}
"""What each role must be able to do."""

DEAD_LETTER = {"dead_items", "dead_item", "requeue_dead", "purge_dead"}
ALSO: dict[str, set[str]] = {
    "producer": set(),
    "worker": {"add", "add_many delayed", "light_clean", "retry_policy", "workers", "stats", *DEAD_LETTER},
    "operator": {
        "add",
        "add_many delayed",
        "renew",
        "renew_many",
        "complete",
        "complete_many",
        "release",
        "release_many",
        "fail",
        "fail to dead",
        "fire",
    },
    "admin": set(),
    "observer": set(),
    "scheduler": {"add", "workers"},
}
"""What else each role can do (``Role.also`` says it in words); every other operation is refused."""


def allowed(role: str, jobs: dict[str, set[str]] = JOBS, also: dict[str, set[str]] = ALSO) -> set[str]:
    """The operations ``role`` may run; every other one is refused and must write nothing. A role
    that none of these tables names yet may do nothing: the matrices below cover it all the same."""
    return jobs.get(role, set()) | also.get(role, set())


def method(operation: str) -> str:
    """The client method an entry of OPERATIONS calls: its name's first word."""
    return re.split(r"[ ,]", operation)[0]


def test_the_matrices_cover_every_operation() -> None:
    """Every public method of the clients is in OPERATIONS (or SHARDED_OPERATIONS), so the role x
    operation matrices below run it as every role of acl.ROLES: a new method fails here until it
    has an entry."""
    for client, operations in ((WorkQueue, OPERATIONS), (ShardedWorkQueue, SHARDED_OPERATIONS)):
        public = {
            name for name in dir(client) if not name.startswith("_") and callable(getattr(client, name))
        }
        assert public <= {method(name) for name in operations}, client.__name__


def spec_section() -> str:
    return SPEC.read_text().split("### 13.1 ACL roles")[1].split("\n## ")[0]


def spec_table_row(role: acl.Role) -> str:
    """The row of SPEC §13.1's role table that ``role`` implies."""
    sent = ", ".join(f"`{command.upper().replace('|', ' ')}`" for command in role.commands) or "nothing"
    scripts = ", ".join([*role.scripts, *(f"{name} (its reads only)" for name in role.reads)])
    return f"| {role.name} | {role.job} | {role.also} | {scripts} | {sent} |"


def rwq_acl(*args: str) -> str:
    result = CliRunner().invoke(cli, ["acl", *args])
    assert result.exit_code == 0, result.output
    return result.output.strip()


def create_user(r: redis.Redis, line: str) -> None:
    words = shlex.split(line)
    assert words[:2] == ["ACL", "SETUSER"]
    command(r, *words, f">{PASSWORD}")


def connect(server: RedisServer, user: str) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=server.port, username=user, password=PASSWORD)


def role_users(
    r: redis.Redis, server: RedisServer, *options: str, tag: str = QUEUE
) -> Iterator[dict[str, redis.Redis]]:
    """One client per role, each logged in as user ``<tag>-<role>`` of ``rwq acl ROLE --prefix
    jobs [options]``; the users are deleted afterwards."""
    clients = {}
    for role in acl.ROLES:
        create_user(r, rwq_acl(role, "--prefix", QUEUE, *options, "--user", f"{tag}-{role}"))
        clients[role] = connect(server, f"{tag}-{role}")
    r.script_flush()  # the EVAL fallback runs as each role too
    yield clients
    for role, client in clients.items():
        client.close()
        r.acl_deluser(f"{tag}-{role}")


@pytest.fixture
def users(r: redis.Redis, redis_server: RedisServer) -> Iterator[dict[str, redis.Redis]]:
    """One client per role, each logged in as the user ``rwq acl ROLE --prefix jobs`` prints."""
    yield from role_users(r, redis_server)


def refused(exc: BaseException) -> bool:
    return any(sign in str(exc) for sign in ("NOPERM", "no permissions", "can't run", "can't access"))


READERS: dict[bytes, Callable[[redis.Redis, bytes], Any]] = {
    b"string": lambda r, key: r.get(key),
    b"list": lambda r, key: r.lrange(key, 0, -1),
    b"hash": lambda r, key: r.hgetall(key),
    b"set": lambda r, key: sorted(r.smembers(key)),
    b"zset": lambda r, key: r.zrange(key, 0, -1, withscores=True),
}


def snapshot(r: redis.Redis) -> dict[bytes, tuple[bytes, Any, bool]]:
    """The whole Redis: every key with its type, its value and whether it has a TTL."""
    state: dict[bytes, tuple[bytes, Any, bool]] = {}
    for key in r.scan_iter(count=1000):
        kind: bytes = command(r, "TYPE", key)
        state[key] = (kind, READERS[kind](r, key), r.pttl(key) > 0)
    return state


def outcome_of(role: str, call: Callable[[], Any], r: redis.Redis, *, its_own: bytes = b"") -> str:
    """Run ``call`` as ``role``: "ok", "NOPERM" for a typed NoPermission after which Redis is
    unchanged (RWQ-SEC-006: refused before the first write), else what went wrong. ``its_own``:
    a key the role's job writes first whatever the call (the admin's shard count), left out."""
    before = snapshot(r)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the server check must not warn either
            call()
    except NoPermission as exc:
        after = snapshot(r)
        after.pop(its_own, None) if its_own not in before else None
        if after != before:
            changed = sorted(key for key in before.keys() | after.keys() if before.get(key) != after.get(key))
            return f"{role}: refused after writing {changed}"
        return "NOPERM" if refused(exc) else f"{role}: NoPermission without a refusal: {exc}"
    except RwqError as exc:
        if refused(exc):
            return f"{role}: refused, but as {type(exc).__name__}: {exc}"
        return exc.code if snapshot(r) == before else f"{role}: {exc.code} after writing"
    return "ok"


def attempt(
    role: str, client: redis.Redis, name: str, prefix: str, r: redis.Redis, *, declared_keys: bool = False
) -> str:
    """Run one operation as ``client`` on a fresh queue ``prefix``: see :func:`outcome_of`."""
    r.flushall()
    setup, op = OPERATIONS[name]
    state = setup(WorkQueue(r, prefix))
    return outcome_of(role, lambda: op(WorkQueue(client, prefix, declared_keys=declared_keys), state), r)


def test_spec_role_table_is_the_code() -> None:
    """SPEC §13.1 shows exactly acl.ROLES: its table rows, and the lines for queue ``jobs``."""
    section = spec_section()
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert rows == [spec_table_row(role) for role in acl.ROLES.values()]
    lines = [line for line in section.splitlines() if line.startswith("ACL SETUSER jobs-")]
    assert lines == [acl.setuser(role, QUEUE) for role in acl.ROLES], (
        "SPEC §13.1 is stale: paste the output of `rwq acl ROLE --prefix jobs` for each role"
    )


def test_rwq_acl_prints_the_setuser_line() -> None:
    assert rwq_acl("worker", "--prefix", "jobs:high", "--user", "w") == acl.setuser(
        "worker", "jobs:high", "w"
    )
    line = rwq_acl("producer", "--prefix", "my queue")
    assert shlex.split(line)[5] == "~my queue:queue"
    result = CliRunner().invoke(cli, ["acl", "worker", "--prefix", "jobs:*"])
    assert result.exit_code == 1
    assert "INVALID_ARGUMENT" in result.output
    with pytest.raises(InvalidArgument):
        acl.rules("reader", QUEUE)
    assert "%R~jobs:policy" in rwq_acl("worker", "--prefix", "jobs")
    assert "~jobs:policy" in shlex.split(rwq_acl("worker", "--prefix", "jobs", "--redis6"))


def test_script_table_matches_the_scripts() -> None:
    """acl.SCRIPT_KEYS names every key family a script builds, and script_commands reads the calls."""
    assert set(acl.SCRIPT_KEYS) == set(registry())
    for name, families in acl.SCRIPT_KEYS.items():
        body = (LUA / f"{name}.lua").read_text()
        # The declared-keys check (SPEC §20) compares key names; it touches no key.
        body = re.sub(r"-- rwq:declared-keys begin.*?-- rwq:declared-keys end", "", body, flags=re.S)
        # The key checks compare key names with the stats flag (RWQ-STATS-009); only the scripts
        # that put the flag in their checks read it.
        body = re.sub(r"local function checked_without_flag.*?\nend\n", "", body, flags=re.S)
        built = {n + "*" if n.endswith(":") else n for n in re.findall(r"\.\. '([a-z_:]+)'", body)}
        built = {re.sub(r"^:data$", "delayed:data", n) for n in built}  # delayed .. ':data'
        assert built <= families, name
    assert acl.script_commands("renew") >= {"exists", "mget", "set"}
    assert acl.script_commands("counts") >= {"llen", "zcard"}
    assert "set" not in acl.script_commands("counts")


@pytest.mark.parametrize("role", list(acl.ROLES))
def test_each_role_does_its_job_on_its_queue_only(
    role: str, users: dict[str, redis.Redis], r: redis.Redis
) -> None:
    """Side by side: the role's operations work on ``jobs`` and are refused on ``jobs:high``; every
    other operation is refused on both."""
    outcome = {
        name: (attempt(role, users[role], name, QUEUE, r), attempt(role, users[role], name, OTHER, r))
        for name in OPERATIONS
    }
    can = allowed(role)
    expected = {name: ("ok" if name in can else "NOPERM", "NOPERM") for name in OPERATIONS}
    assert outcome == expected


@pytest.fixture
def declared_users(r: redis.Redis, redis_server: RedisServer) -> Iterator[dict[str, redis.Redis]]:
    """One client per role, each logged in as ``rwq acl ROLE --prefix jobs --declared-keys`` prints."""
    yield from role_users(r, redis_server, "--declared-keys", tag="d")


POLICY_WRITES = {"set_retry_policy", "clear retry policy"}
LIVE_WRITES = {"worker_beat", "worker_beat, one expired", "worker_leave"}
"""The operator only reads the live workers (``%R~``); declared, those keys are read-write."""
STATS_WRITES = {"enable_stats", "disable_stats"}
"""Only the admin writes the stats flag; declared, the flag is read-write for every role that
counts (each has SET, DEL and TYPE already)."""


STATS_OPERATIONS = {"enable_stats", "disable_stats", "stats"}


@pytest.mark.parametrize("role", ["producer", "worker", "operator"])
def test_a_role_from_before_profile_stats_still_does_its_job(
    role: str, r: redis.Redis, redis_server: RedisServer
) -> None:
    """RWQ-STATS-009: a user made from this role's ACL line as it was before profile stats (no
    ``P:stats`` keys, no HINCRBY) does every job of the role on a queue whose stats are on, and
    counts nothing: upgrading the client does not break a deployment's users."""
    new = rwq_acl(role, "--prefix", QUEUE, "--user", f"old-{role}")
    gone = {f"%R~{QUEUE}:stats", f"~{QUEUE}:stats:series", "+hincrby"}
    old = " ".join(word for word in new.split() if word not in gone)
    assert old != new
    create_user(r, old)
    client = connect(redis_server, f"old-{role}")
    series = f"{QUEUE}:stats:series"
    try:
        for name in sorted((JOBS[role] | ALSO[role]) - STATS_OPERATIONS):
            r.flushall()
            r.script_flush()  # the EVAL fallback runs as the old user too
            setup, op = OPERATIONS[name]
            WorkQueue(r, QUEUE).enable_stats()
            state = setup(WorkQueue(r, QUEUE))
            before = r.hgetall(series)
            outcome = outcome_of(role, partial(op, WorkQueue(client, QUEUE), state), r)
            assert (name, outcome, r.hgetall(series)) == (name, "ok", before)
    finally:
        client.close()
        r.acl_deluser(f"old-{role}")


SCHEDULE_WRITES = {"put_schedule", "put_schedule, replace", "remove_schedule"}
"""The operator and the scheduler only read the definitions (``%R~``); declared, they write them
(and the scheduler the pauses); a declared add names ``P:delayed:data``, which the scheduler
lacks."""


@pytest.mark.parametrize("role", list(acl.ROLES))
def test_each_role_does_its_job_with_declared_keys(
    role: str, declared_users: dict[str, redis.Redis], r: redis.Redis
) -> None:
    """Profile declared-keys (SPEC §20): with the roles of ``rwq acl --declared-keys``, every role
    does its job with the profile on, still on its own queue only; the worker and the operator
    may now rewrite the retry policy, which is what RWQ-DECL-005 warns of (and the operator
    write the live workers); the observer, which has no write command, still writes nothing."""
    client = declared_users[role]
    outcome = {
        name: (
            attempt(role, client, name, QUEUE, r, declared_keys=True),
            attempt(role, client, name, OTHER, r, declared_keys=True),
        )
        for name in OPERATIONS
    }
    can = allowed(role) | (POLICY_WRITES | LIVE_WRITES | SCHEDULE_WRITES if role == "operator" else set())
    can |= POLICY_WRITES if role == "worker" else set()
    can |= STATS_WRITES if role in ("producer", "worker", "operator", "scheduler") else set()
    if role == "scheduler":
        can = (can | SCHEDULE_WRITES | {"pause_schedule", "resume_schedule"}) - {"add"}
    expected = {name: ("ok" if name in can else "NOPERM", "NOPERM") for name in OPERATIONS}
    assert outcome == expected


def test_a_default_role_refuses_declared_calls_of_the_policy(
    users: dict[str, redis.Redis], r: redis.Redis
) -> None:
    """Why the profile is off by default: Redis 7 checks declared keys as read-write, and the
    default worker may only read ``P:policy`` (``%R~``), the default producer ``P:dead``."""
    assert attempt("worker", users["worker"], "lease", QUEUE, r) == "ok"
    assert attempt("worker", users["worker"], "lease", QUEUE, r, declared_keys=True) == "NOPERM"
    assert attempt("producer", users["producer"], "add", QUEUE, r) == "ok"
    assert attempt("producer", users["producer"], "add", QUEUE, r, declared_keys=True) == "NOPERM"


def test_admin_loads_the_scripts(users: dict[str, redis.Redis], r: redis.Redis) -> None:
    for script in registry().values():
        assert users["admin"].script_load(script.source) == script.sha1
    for role in ("producer", "worker", "operator"):
        with pytest.raises(redis.exceptions.NoPermissionError):
            users[role].script_load(registry()["add"].source)


@pytest.mark.parametrize("role", list(acl.ROLES))
def test_no_role_reads_configuration_or_other_queues(
    role: str, users: dict[str, redis.Redis], r: redis.Redis
) -> None:
    client = users[role]
    r.flushall()
    WorkQueue(r, OTHER).add("secret-id", b"x")
    forbidden: list[tuple[Any, ...]] = [
        ("CONFIG", "GET", "requirepass"),
        ("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"),
        ("KEYS", "*"),
        ("FLUSHALL",),
        ("FLUSHDB",),
        ("DEBUG", "SLEEP", "0"),
        ("ACL", "LIST"),
        ("CLIENT", "LIST"),
        ("MONITOR",),
        ("GET", f"{OTHER}:item:secret-id"),
        ("LRANGE", f"{OTHER}:queue", 0, -1),
        ("EVAL", "return redis.call('LRANGE', KEYS[1], 0, -1)", 1, f"{OTHER}:queue"),
        ("EVAL", f"return redis.call('LRANGE', '{OTHER}:queue', 0, -1)", 0),  # an undeclared key
    ]
    for forbidden_command in forbidden:
        with pytest.raises(redis.exceptions.ResponseError) as caught:
            command(client, *forbidden_command)
        assert refused(caught.value), (role, forbidden_command, caught.value)
    if role == "operator":
        # The deep-cleaning role's documented leak: SCAN is not filtered by key patterns.
        assert b"jobs:high:item:secret-id" in client.scan(0, match="*", count=1000)[1]
    else:
        with pytest.raises(redis.exceptions.NoPermissionError):
            client.scan(0)
    assert r.dbsize() == 2


def test_the_server_check_degrades_silently_without_info(
    r: redis.Redis, redis_server: RedisServer, recwarn: pytest.WarningsRecorder
) -> None:
    """A role without INFO (or a server that renamed it) still works: version and policy unknown."""
    rules = [rule for rule in acl.rules("operator", QUEUE) if rule != "+info"]
    command(r, "ACL", "SETUSER", "noinfo", *rules, f">{PASSWORD}")
    r.config_set("maxmemory-policy", "allkeys-lru")
    client = connect(redis_server, "noinfo")
    try:
        with pytest.raises(redis.exceptions.NoPermissionError):
            client.info()
        assert WorkQueue(client, QUEUE).counts().queued == 0
        assert not [w for w in recwarn if "maxmemory" in str(w.message)]
    finally:
        r.config_set("maxmemory-policy", "noeviction")
        client.close()
        r.acl_deluser("noinfo")


def test_the_server_check_degrades_silently_without_info_memory(
    r: redis.Redis, redis_server: RedisServer, recwarn: pytest.WarningsRecorder
) -> None:
    """A role allowed only ``INFO server`` (Redis 7 first-argument rule): the version is checked,
    the eviction policy stays unknown, and the operation goes on."""
    rules = [rule for rule in acl.rules("operator", QUEUE) if rule != "+info"]
    command(r, "ACL", "SETUSER", "serverinfo", *rules, "+info|server", f">{PASSWORD}")
    r.config_set("maxmemory-policy", "allkeys-lru")
    client = connect(redis_server, "serverinfo")
    try:
        assert client.info("server")["redis_version"]
        with pytest.raises(redis.exceptions.NoPermissionError):
            client.info("memory")
        assert WorkQueue(client, QUEUE).counts().queued == 0
        assert not [w for w in recwarn if "maxmemory" in str(w.message)]
    finally:
        r.config_set("maxmemory-policy", "noeviction")
        client.close()
        r.acl_deluser("serverinfo")


async def test_the_async_server_check_degrades_silently_without_info(
    r: redis.Redis, redis_server: RedisServer, recwarn: pytest.WarningsRecorder
) -> None:
    rules = [rule for rule in acl.rules("operator", QUEUE) if rule != "+info"]
    command(r, "ACL", "SETUSER", "noinfo", *rules, f">{PASSWORD}")
    r.config_set("maxmemory-policy", "allkeys-lru")
    client = aioredis.Redis(host="127.0.0.1", port=redis_server.port, username="noinfo", password=PASSWORD)
    try:
        assert (await AsyncWorkQueue(client, QUEUE).counts()).queued == 0
        assert not [w for w in recwarn if "maxmemory" in str(w.message)]
    finally:
        r.config_set("maxmemory-policy", "noeviction")
        await client.aclose()
        r.acl_deluser("noinfo")


def test_the_eviction_warning_reaches_a_role_through_info(
    users: dict[str, redis.Redis], r: redis.Redis
) -> None:
    """Every role has INFO, not CONFIG: it still gets the eviction warning (RWQ-SERVER-003)."""
    r.config_set("maxmemory-policy", "volatile-lru")
    try:
        with pytest.warns(Warning, match="volatile-lru"):
            WorkQueue(users["producer"], QUEUE).add("a", b"")
    finally:
        r.config_set("maxmemory-policy", "noeviction")


async def test_the_async_client_works_as_a_worker_on_its_queue_only(
    users: dict[str, redis.Redis], r: redis.Redis, redis_server: RedisServer
) -> None:
    client = aioredis.Redis(
        host="127.0.0.1", port=redis_server.port, username=f"{QUEUE}-worker", password=PASSWORD
    )
    try:
        for prefix, allowed in ((QUEUE, True), (OTHER, False)):
            r.flushall()
            WorkQueue(r, prefix).add_many([("a", b"A"), ("b", b"B")])
            queue = AsyncWorkQueue(client, prefix)
            try:
                held = await queue.lease(60_000)
                assert held is not None
                assert await queue.renew(held, 60_000)
                assert await queue.complete(held, require_lease=True)
                again = await queue.lease(60_000, block=True, timeout_ms=100)
                assert again is not None
                assert await queue.release(again)
                outcome = "ok"
            except RedisFailure as exc:
                outcome = "NOPERM" if refused(exc) else str(exc)
            assert outcome == ("ok" if allowed else "NOPERM"), prefix
    finally:
        await client.aclose()


def _work_one(users: dict[str, redis.Redis], **options: Any) -> Worker:
    """Run a Worker as the worker role until it completed one item the producer added."""
    WorkQueue(users["producer"], QUEUE).add("a", b"x")
    done = threading.Event()
    worker = Worker(WorkQueue(users["worker"], QUEUE), lambda job: done.set(), poll_timeout_ms=100, **options)
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        assert done.wait(10)
    finally:
        worker.stop()
        thread.join(30)
    assert worker.stats.completed == 1
    return worker


def test_a_worker_role_without_a_policy_refuses_to_start(
    users: dict[str, redis.Redis], r: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    """RWQ-WORKER-001: the worker role may only read the retry policy. A Worker that brings one,
    on a queue that has none, refuses to start with one line naming the admin command, and
    writes nothing; with retry=None it runs; where an admin set a policy, it reads it."""
    WorkQueue(users["producer"], QUEUE).add("a", b"x")
    before = {key: r.dump(key) for key in r.keys("*")}
    worker = Worker(WorkQueue(users["worker"], QUEUE), lambda job: None, poll_timeout_ms=100)
    with pytest.raises(PolicyMissing) as refusal:
        worker.run()
    message = str(refusal.value)
    assert "\n" not in message
    assert "rwq policy set --prefix jobs" in message
    assert "RWQ-WORKER-001" in message
    assert {key: r.dump(key) for key in r.keys("*")} == before
    r.delete(f"{QUEUE}:item:a", f"{QUEUE}:queue")

    _work_one(users, retry=None)
    assert WorkQueue(r, QUEUE).retry_policy() is None
    WorkQueue(users["admin"], QUEUE).set_retry_policy(RetryPolicy(max_attempts=2))
    caplog.clear()
    _work_one(users, retry=RetryPolicy(max_attempts=2))
    assert WorkQueue(r, QUEUE).retry_policy() == RetryPolicy(max_attempts=2)
    assert not [rec for rec in caplog.records if rec.levelno >= logging.WARNING]


async def test_an_async_worker_role_without_a_policy_refuses_to_start(
    users: dict[str, redis.Redis], r: redis.Redis, redis_server: RedisServer
) -> None:
    """RWQ-WORKER-001 for AsyncWorker: the same one line, nothing written."""
    client = aioredis.Redis(
        host="127.0.0.1", port=redis_server.port, username=f"{QUEUE}-worker", password=PASSWORD
    )

    async def handler(job: AsyncJob) -> None:
        pass

    try:
        worker = AsyncWorker(AsyncWorkQueue(client, QUEUE), handler, poll_timeout_ms=100)
        with pytest.raises(PolicyMissing, match="rwq policy set --prefix jobs"):
            await worker.run()
    finally:
        await client.aclose()
    assert r.keys("*") == []


def test_a_worker_without_a_policy_never_loops_hot(users: dict[str, redis.Redis], r: redis.Redis) -> None:
    """RWQ-WORKER-002: the worker role, no policy, retry=None, a handler that always raises: in
    3 s it runs the item at most 4 times (the fallback delay is 1 s), not thousands."""
    WorkQueue(users["producer"], QUEUE).add("a", b"x")
    runs = []

    def always_fails(job: Any) -> None:
        runs.append(time.monotonic())
        raise RuntimeError("boom")

    worker = Worker(WorkQueue(users["worker"], QUEUE), always_fails, poll_timeout_ms=100, retry=None)
    thread = threading.Thread(target=worker.run)
    thread.start()
    time.sleep(3)
    worker.stop()
    thread.join(30)
    assert 2 <= len(runs) <= 4, runs
    assert WorkQueue(r, QUEUE).retry_policy() is None


def test_producers_and_workers_may_wait_for_replicas(users: dict[str, redis.Redis]) -> None:
    """Profile ack's WAIT is in the producer's and the worker's roles: with no replica here, a
    waiting add and complete are NOT_REPLICATED, never refused by the ACL."""
    producer = WorkQueue(users["producer"], QUEUE, wait_replicas=1, wait_timeout_ms=10)
    with pytest.raises(NotReplicated):
        producer.add("a", b"x")
    worker = WorkQueue(users["worker"], QUEUE, wait_replicas=1, wait_timeout_ms=10)
    lease = worker.lease(10_000)
    assert lease is not None
    with pytest.raises(NotReplicated):
        worker.complete(lease)


SHARDS = 3


def _unrecorded(queue: ShardedWorkQueue) -> None:
    """A sharded queue whose shard count no one recorded yet (the admin's job, RWQ-SHARD-009)."""
    queue.queues[0]._redis.delete(f"{queue.layout.prefixes[0]}:shards")


def _other_count(queue: ShardedWorkQueue, _: Any) -> Any:
    """The queue opened with another shard count than the recorded one."""
    return ShardedWorkQueue(queue.queues[0]._redis, queue.prefix, shards=SHARDS + 1).counts()


SHARDED_OPERATIONS: dict[str, tuple[Setup, Op]] = {
    **{
        name: op
        for name, op in OPERATIONS.items()
        if hasattr(ShardedWorkQueue, method(name))
        and name != "put_schedule, replace"  # no schedule to replace
    },
    "lease blocking on the bell": (lambda q: None, lambda q, _: q.lease(60_000, block=True, timeout_ms=50)),
    "release now": (_held, lambda q, held: q.release(held)),
    "record_shard_count": (_unrecorded, lambda q, _: q.record_shard_count()),
    "add, no shard count recorded": (_unrecorded, lambda q, _: q.add("n", b"N")),
    "open with another shard count": (lambda q: None, _other_count),
}
"""The operations of a sharded queue (SPEC §19): the plain queue's, the two that use the
doorbell besides add and the dead requeue (a blocking lease waits on it, a release rings it),
and the shard count's: recording it (the admin's job), a first use before it is recorded, and
a client with another count."""

SHARDED_JOBS = {
    **JOBS,
    "worker": JOBS["worker"] | {"lease blocking on the bell", "release now"},
    "admin": JOBS["admin"] | {"record_shard_count"},
}
SHARDED_ALSO = {
    **ALSO,
    "operator": ALSO["operator"] | {"release now"},  # it may release (never lease)
    "scheduler": ALSO["scheduler"] | {"stats"},  # it reads the stats flag, and GETs the shard count
}


@pytest.fixture
def sharded_users(r: redis.Redis, redis_server: RedisServer) -> Iterator[dict[str, redis.Redis]]:
    """One client per role, logged in as ``rwq acl ROLE --prefix jobs --shards 3`` prints."""
    yield from role_users(r, redis_server, "--shards", str(SHARDS), tag="s")


def attempt_sharded(
    role: str,
    client: redis.Redis,
    name: str,
    prefix: str,
    r: redis.Redis,
    *,
    caplog: pytest.LogCaptureFixture,
) -> str:
    """One operation as ``client`` on a fresh sharded queue whose count an unrestricted client
    recorded: see :func:`outcome_of`, or "no ring" (the role could not ring the doorbell, which
    the client only logs)."""
    r.flushall()
    caplog.clear()
    setup, op = SHARDED_OPERATIONS[name]
    queue = ShardedWorkQueue(r, prefix, shards=SHARDS)
    queue.record_shard_count()
    state = setup(queue)
    # The admin's first call on a queue with no count records it, its job (RWQ-SHARD-009).
    its_own = f"{{{prefix}#0}}:shards".encode() if role == "admin" else b""
    call = lambda: op(ShardedWorkQueue(client, prefix, shards=SHARDS), state)  # noqa: E731
    outcome = outcome_of(role, call, r, its_own=its_own)
    if outcome == "ok" and any("doorbell" in record.getMessage() for record in caplog.records):
        return "no ring"
    return outcome


@pytest.mark.parametrize("role", list(acl.ROLES))
def test_each_role_does_its_job_on_its_sharded_queue_only(
    role: str, sharded_users: dict[str, redis.Redis], r: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    """The same matrix for sharded queue ``jobs`` (3 shards) beside sharded queue ``jobs:high``:
    every shard, the count check and the doorbell are in the roles that need them, and nothing
    of the other queue is."""
    client = sharded_users[role]
    outcome = {
        name: (
            attempt_sharded(role, client, name, QUEUE, r, caplog=caplog),
            attempt_sharded(role, client, name, OTHER, r, caplog=caplog),
        )
        for name in SHARDED_OPERATIONS
    }
    can = allowed(role, SHARDED_JOBS, SHARDED_ALSO)
    expected = {name: ("ok" if name in can else "NOPERM", "NOPERM") for name in SHARDED_OPERATIONS}
    # Every role that may read shard 0's count is told its count is another (nothing written).
    expected["open with another shard count"] = ("SHARD_MISMATCH", "NOPERM")
    # No schedules on a sharded queue yet, whoever asks (RWQ-SCHED-016).
    expected["put_schedule"] = ("INVALID_ARGUMENT", "INVALID_ARGUMENT")
    if role == "scheduler":  # it may add, but a sharded queue has no scheduler to ring for
        expected["add"] = ("no ring", "NOPERM")
    assert outcome == expected


def test_sharded_roles_name_every_shard_and_nothing_more(r: redis.Redis) -> None:
    """Digit classes name shards 0..N-1 and nothing else: no shard N, no leading zero, no shard
    of sharded queue ``jobs#1`` (``{jobs#1#0}``), checked by Redis itself (ACL DRYRUN)."""
    words = shlex.split(rwq_acl("worker", "--prefix", QUEUE, "--shards", "12"))
    patterns = {word for word in words if "~" in word}
    assert {"~{jobs#[0-9]}:queue", "~{jobs#1[0-1]}:queue", "~{jobs#bell}", "%R~{jobs#0}:shards"} <= patterns
    assert "~{jobs#0}:shards" in shlex.split(rwq_acl("admin", "--prefix", QUEUE, "--shards", "12"))
    assert "%R~{jobs#[0-9]}:policy" in patterns
    assert "+blpop" in words
    assert "+blmove" not in words
    create_user(r, rwq_acl("worker", "--prefix", QUEUE, "--shards", "12", "--user", "twelve"))
    try:
        for shard, allowed in (
            ("0", True),
            ("9", True),
            ("11", True),
            ("12", False),
            ("01", False),
            ("1#0", False),
        ):
            reply = command(r, "ACL", "DRYRUN", "twelve", "GET", f"{{jobs#{shard}}}:item:a")
            assert (reply == b"OK") is allowed, (shard, reply)
    finally:
        r.acl_deluser("twelve")
    for role in acl.ROLES:
        ringing = "~{jobs#bell}" in shlex.split(rwq_acl(role, "--prefix", QUEUE, "--shards", "2"))
        assert ringing is (role in acl.RINGS)
    big = [
        word for word in shlex.split(rwq_acl("worker", "--prefix", QUEUE, "--shards", "1024")) if "~" in word
    ]
    assert len(big) == 5 * 18 + 2  # 5 digit classes per key family, not 1,024
    for bad in (["--prefix", "a{b}", "--shards", "2"], ["--prefix", "jobs", "--shards", "1025"]):
        result = CliRunner().invoke(cli, ["acl", "worker", *bad])
        assert result.exit_code == 1
        assert "INVALID_ARGUMENT" in result.output


def test_rwq_policy_is_the_admins_job(
    users: dict[str, redis.Redis], r: redis.Redis, redis_server: RedisServer
) -> None:
    """rwq policy set|show|clear as the admin role; the worker role may show it but not set or
    clear it, and its refused call writes nothing. The JSON follows the cli-output schema."""
    schema = json.loads(
        (Path(__file__).resolve().parents[1] / "schemas" / "cli-output.schema.json").read_text()
    )
    validator = Draft202012Validator(schema)

    def rwq_policy(role: str, *args: str) -> Any:
        url = f"redis://{QUEUE}-{role}:{PASSWORD}@127.0.0.1:{redis_server.port}/0"
        return CliRunner().invoke(cli, ["policy", *args, "--url", url, "--prefix", QUEUE])

    shown = rwq_policy("admin", "show", "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output) == {"command": "policy show", "prefix": QUEUE, "policy": None}
    stored = rwq_policy("admin", "set", "--max-attempts", "2", "--backoff", "fixed", "--json")
    assert stored.exit_code == 0, stored.output
    validator.validate(json.loads(stored.output))
    expected = dataclasses.replace(DEFAULT_RETRY, max_attempts=2, backoff="fixed")
    assert WorkQueue(r, QUEUE).retry_policy() == expected
    for role in ("admin", "worker", "operator"):
        shown = rwq_policy(role, "show", "--json")
        assert shown.exit_code == 0, (role, shown.output)
        document = json.loads(shown.output)
        validator.validate(document)
        assert document["policy"] == dataclasses.asdict(expected)
    assert "max_attempts" in rwq_policy("worker", "show").output
    before = r.dump(f"{QUEUE}:policy")
    for args in (("set", "--max-attempts", "9"), ("clear",)):
        refused_call = rwq_policy("worker", *args)
        assert refused_call.exit_code == 1, refused_call.output
        assert refused(Exception(refused_call.output)), refused_call.output
        assert r.dump(f"{QUEUE}:policy") == before
    bad = rwq_policy("admin", "set", "--jitter-pct", "101")
    assert bad.exit_code == 2, bad.output
    assert r.dump(f"{QUEUE}:policy") == before
    cleared = rwq_policy("admin", "clear", "--json")
    assert cleared.exit_code == 0, cleared.output
    validator.validate(json.loads(cleared.output))
    assert WorkQueue(r, QUEUE).retry_policy() is None


def test_a_wrong_shard_count_records_nothing_and_the_admin_records_the_right_one(
    r: redis.Redis, redis_server: RedisServer
) -> None:
    """#21: as the worker or operator of a 4-shard queue, a client opened with 5 shards wrote
    ``{P#0}:shards = 5`` before it was refused, and every correct client then got SHARD_MISMATCH.
    Now only the admin records the count (RWQ-SHARD-009), with ``rwq shards``."""
    r.flushall()
    for role in acl.ROLES:
        create_user(r, rwq_acl(role, "--prefix", QUEUE, "--shards", "4", "--user", f"four-{role}"))
    clients = {role: connect(redis_server, f"four-{role}") for role in acl.ROLES}
    try:
        for role in ("producer", "worker", "operator"):
            for shards in (5, 4):
                with pytest.raises(NoPermission, match=f"rwq shards --prefix jobs --shards {shards}"):
                    ShardedWorkQueue(clients[role], QUEUE, shards=shards).add("a", b"x")
                assert r.keys("*") == []
        url = f"redis://four-admin:{PASSWORD}@127.0.0.1:{redis_server.port}/0"
        recorded = CliRunner().invoke(
            cli, ["shards", "--prefix", QUEUE, "--shards", "4", "--url", url, "--json"]
        )
        assert recorded.exit_code == 0, recorded.output
        assert r.get("{jobs#0}:shards") == b"4"
        assert ShardedWorkQueue(clients["producer"], QUEUE, shards=4).add("a", b"x")
        with pytest.raises(ShardMismatch):
            ShardedWorkQueue(clients["worker"], QUEUE, shards=5).lease(1000)
        assert ShardedWorkQueue(clients["worker"], QUEUE, shards=4).lease(1000) is not None
        mismatch = CliRunner().invoke(cli, ["shards", "--prefix", QUEUE, "--shards", "5", "--url", url])
        assert mismatch.exit_code == 1
        assert "SHARD_MISMATCH" in mismatch.output
        assert r.get("{jobs#0}:shards") == b"4"
    finally:
        for role, client in clients.items():
            client.close()
            r.acl_deluser(f"four-{role}")


def test_a_sharded_worker_with_no_recorded_count_names_rwq_shards(
    sharded_users: dict[str, redis.Redis], r: redis.Redis
) -> None:
    """A worker-role Worker on a sharded queue whose count is not recorded (the policy is on every
    shard): a ShardCountUnrecorded (a NoPermission) naming `rwq shards`, not PolicyMissing; nothing
    written. With retry=None too: the worker reads the policy at start."""
    ShardedWorkQueue(sharded_users["admin"], QUEUE, shards=SHARDS).set_retry_policy(DEFAULT_RETRY)
    r.delete(f"{{{QUEUE}#0}}:shards")
    before = {key: r.dump(key) for key in r.keys("*")}
    for retry in (DEFAULT_RETRY, None):
        queue = ShardedWorkQueue(sharded_users["worker"], QUEUE, shards=SHARDS)
        with pytest.raises(ShardCountUnrecorded) as refusal:
            Worker(queue, lambda job: None, poll_timeout_ms=100, retry=retry).run()
        assert isinstance(refusal.value, NoPermission)
        assert f"rwq shards --prefix jobs --shards {SHARDS}" in str(refusal.value)
        assert "\n" not in str(refusal.value)
    assert {key: r.dump(key) for key in r.keys("*")} == before


def test_a_sharded_worker_without_a_policy_names_the_sharded_fix(
    sharded_users: dict[str, redis.Redis], r: redis.Redis
) -> None:
    """PolicyMissing on a sharded queue names `rwq policy set --prefix jobs --shards N`, and words
    retry=None as the in-code choice (`rwq worker` has no such option); running it as the admin fixes it."""
    ShardedWorkQueue(sharded_users["admin"], QUEUE, shards=SHARDS).record_shard_count()
    queue = ShardedWorkQueue(sharded_users["worker"], QUEUE, shards=SHARDS)
    with pytest.raises(PolicyMissing) as refusal:
        Worker(queue, lambda job: None, poll_timeout_ms=100).run()
    fix = f"rwq policy set --prefix jobs --shards {SHARDS}"
    assert f"run `{fix}` as an admin (or, in code, pass retry=None" in str(refusal.value)
    url = f"redis://s-admin:{PASSWORD}@127.0.0.1:{r.connection_pool.connection_kwargs['port']}"
    done = CliRunner().invoke(cli, [*shlex.split(fix)[1:], "--url", url])
    assert done.exit_code == 0, done.output
    Worker(queue, lambda job: None, poll_timeout_ms=100, burst=True).run()


async def test_an_async_sharded_worker_without_a_policy_names_the_sharded_fix(
    r: redis.Redis, redis_server: RedisServer
) -> None:
    """The same message from AsyncWorker."""
    create_user(r, rwq_acl("worker", "--prefix", QUEUE, "--shards", "2", "--user", "async-worker"))
    ShardedWorkQueue(r, QUEUE, shards=2).record_shard_count()
    client = aioredis.Redis(
        host="127.0.0.1", port=redis_server.port, username="async-worker", password=PASSWORD
    )

    async def handler(job: AsyncJob) -> None:
        pass

    try:
        worker = AsyncWorker(AsyncShardedWorkQueue(client, QUEUE, shards=2), handler, poll_timeout_ms=100)
        with pytest.raises(PolicyMissing, match="rwq policy set --prefix jobs --shards 2"):
            await worker.run()
    finally:
        await client.aclose()
        r.acl_deluser("async-worker")


async def test_the_async_sharded_client_names_the_admin_command_too(
    r: redis.Redis, redis_server: RedisServer
) -> None:
    """AsyncShardedWorkQueue: a worker's first use of a queue with no recorded count is refused
    with the admin's command, and writes nothing; after ``record_shard_count`` as admin it works."""
    r.flushall()
    for role in ("worker", "admin"):
        create_user(r, rwq_acl(role, "--prefix", QUEUE, "--shards", "2", "--user", f"async-{role}"))
    clients = {
        role: aioredis.Redis(
            host="127.0.0.1", port=redis_server.port, username=f"async-{role}", password=PASSWORD
        )
        for role in ("worker", "admin")
    }
    try:
        worker = AsyncShardedWorkQueue(clients["worker"], QUEUE, shards=2)
        with pytest.raises(NoPermission, match="rwq shards --prefix jobs --shards 2"):
            await worker.lease(1000)
        assert r.keys("*") == []
        await AsyncShardedWorkQueue(clients["admin"], QUEUE, shards=2).record_shard_count()
        assert await AsyncShardedWorkQueue(clients["worker"], QUEUE, shards=2).lease(1000) is None
        assert r.keys("*") == [b"{jobs#0}:shards"]
    finally:
        for role, client in clients.items():
            await client.aclose()
            r.acl_deluser(f"async-{role}")


def test_a_deep_clean_without_scan_writes_nothing(r: redis.Redis, redis_server: RedisServer) -> None:
    """SPEC §13.1's operator for untrusted tenants has no SCAN: its deep clean (and `rwq clean
    --deep`, which also light-cleans) is refused before the index, the ghost drops, the requeues
    and the light clean write anything (RWQ-SEC-006). Before, the light clean requeued expired
    leases and promoted due items, then the refusal said nothing was written."""
    r.flushall()
    create_user(r, rwq_acl("operator", "--prefix", QUEUE, "--user", "tenant").replace(" +scan", ""))
    tenant = connect(redis_server, "tenant")
    try:
        queue = WorkQueue(r, QUEUE)
        queue.add("expired", b"x")
        assert queue.lease(1) is not None  # its lease expires at once
        queue.add("due", b"x", delay_ms=1)
        r.lpush(f"{QUEUE}:queue", "ghost")  # an id with no item: the index would drop it
        r.set(f"{QUEUE}:item:orphan", b"x")  # in no list: the deep clean would requeue it
        time.sleep(0.01)
        assert outcome_of("tenant", lambda: WorkQueue(tenant, QUEUE).deep_clean(), r) == "NOPERM"
        url = f"redis://tenant:{PASSWORD}@127.0.0.1:{redis_server.port}/0"
        before = snapshot(r)
        result = CliRunner().invoke(cli, ["clean", "--deep", "--prefix", QUEUE, "--url", url])
        assert result.exit_code == 1, result.output
        assert "scan" in result.output
        assert snapshot(r) == before
    finally:
        tenant.close()
        r.acl_deluser("tenant")


def test_rwq_workers_is_the_observers_job(
    users: dict[str, redis.Redis], r: redis.Redis, redis_server: RedisServer
) -> None:
    """``rwq workers`` works as the observer (the least role that reads the live workers, SPEC §21)
    and as the operator; a producer is refused, and the observer's own beat writes nothing."""
    WorkQueue(r, QUEUE).worker_beat("w1", 60_000, {"id": "w1"})
    for role, allowed in (("observer", True), ("operator", True), ("producer", False), ("admin", False)):
        url = f"redis://{QUEUE}-{role}:{PASSWORD}@127.0.0.1:{redis_server.port}/0"
        result = CliRunner().invoke(cli, ["workers", "--url", url, "--prefix", QUEUE, "--json"])
        assert (result.exit_code == 0) is allowed, (role, result.output)
        if allowed:
            assert [w["id"] for w in json.loads(result.output)["workers"]] == ["w1"]
    before = snapshot(r)
    with pytest.raises(NoPermission):
        WorkQueue(users["observer"], QUEUE).worker_beat("w2", 60_000, {})
    assert snapshot(r) == before


def test_each_role_counts_its_events_while_stats_are_on(
    users: dict[str, redis.Redis], r: redis.Redis
) -> None:
    """Profile stats (SPEC §22): once the admin turns them on, the producer's adds, the worker's
    completes and failures and the operator's clean are counted (each role that runs a counting
    script writes the series, and a count it may not write would be lost without an error), and
    the observer reads them."""
    assert WorkQueue(users["admin"], QUEUE).enable_stats() is True
    WorkQueue(users["producer"], QUEUE).add_many([("a", b"A"), ("b", b"B"), ("c", b"C")])
    worker = WorkQueue(users["worker"], QUEUE)
    first = worker.lease(60_000)
    assert first is not None
    assert worker.complete(first) is True
    WorkQueue(r, QUEUE).set_retry_policy(RetryPolicy(max_attempts=1))
    held = worker.lease(60_000)
    assert held is not None
    worker.fail(held, "boom")  # its one attempt used: dead
    WorkQueue(r, QUEUE).set_retry_policy(None)
    abandoned = worker.lease(60_000)
    assert abandoned is not None
    r.delete(f"{QUEUE}:lease:{abandoned.id}")  # its holder died
    assert WorkQueue(users["operator"], QUEUE).light_clean().requeued == (abandoned.id,)
    stats = WorkQueue(users["observer"], QUEUE).stats()
    assert stats.current.as_dict() == {"added": 3, "completed": 1, "failed": 1, "dead": 1, "recovered": 1}


def test_rwq_stats_is_the_observers_job_and_enable_the_admins(
    users: dict[str, redis.Redis], r: redis.Redis, redis_server: RedisServer
) -> None:
    """``rwq stats`` works as the observer (the least role that reads counts and stats) and the
    operator; ``--enable`` and ``--disable`` only as the admin: every other role writes nothing."""

    def run(role: str, *args: str) -> bool:
        url = f"redis://{QUEUE}-{role}:{PASSWORD}@127.0.0.1:{redis_server.port}/0"
        return (
            CliRunner().invoke(cli, ["stats", "--url", url, "--prefix", QUEUE, "--json", *args]).exit_code
            == 0
        )

    for switch in ("--enable", "--disable"):
        for role in ("producer", "worker", "operator", "observer"):
            before = snapshot(r)
            assert not run(role, switch), role
            assert snapshot(r) == before
        assert run("admin", switch)
        assert run("admin", "--enable" if switch == "--disable" else "--disable")
        assert run("admin", switch)
    assert r.exists(f"{QUEUE}:stats") == 0
    assert {role: run(role) for role in acl.ROLES} == {
        "producer": False,
        "worker": False,
        "operator": True,
        "admin": False,
        "observer": True,
        "scheduler": False,
    }


def test_worker_and_scheduler_merge_into_one_user(r: redis.Redis, redis_server: RedisServer) -> None:
    """``rwq acl worker scheduler`` (for ``rwq worker --scheduler``): one user that leases and
    fires, and is still refused the admin's put with nothing written."""
    line = rwq_acl("worker", "scheduler", "--prefix", QUEUE)
    assert shlex.split(line)[2] == "jobs-worker-scheduler"
    words = set(shlex.split(line))
    assert {"%R~jobs:policy", "~jobs:delayed", "%R~jobs:schedules", "~jobs:schedules:fired"} <= words
    create_user(r, line)
    client = connect(redis_server, "jobs-worker-scheduler")
    try:
        for name in ("lease", "fire", "worker_beat"):
            assert attempt("worker+scheduler", client, name, QUEUE, r) == "ok", name
        assert attempt("worker+scheduler", client, "put_schedule", QUEUE, r) == "NOPERM"
    finally:
        client.close()
        r.acl_deluser("jobs-worker-scheduler")
