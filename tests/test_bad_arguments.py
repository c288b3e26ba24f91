"""Random wrong-shaped arguments: a typed rwq error that is also a TypeError or ValueError, and no I/O.

Every public method of both clients, the clients' and the workers' constructors and the settings
objects get, one parameter at a time, a value of a wrong type (None, bool for int, float, str for
bytes, bytes for str, a list, a dict, a set, a Lease where an id is expected...) or of the right
type and a wrong value (negative, too large, empty, too long, a batch with one bad element),
the other parameters being right. The queues run on a real redis-server through a connection
class that counts what it sends: not one command may leave. Each test reports its figures (bad
calls tried, typed, commands sent) and fails on the first untyped error, accepted bad value or
command sent, with the examples.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rwq import AsyncWorker, AsyncWorkQueue, Lease, RetryPolicy, RwqError, Worker, WorkQueue
from rwq.conformance.redis_server import RedisServer
from rwq.sharded import AsyncShardedWorkQueue, ShardedWorkQueue

MAX_MS = 31_536_000_000
EXAMPLES = int(os.environ.get("RWQ_BAD_ARGUMENTS_EXAMPLES", "200"))
SENT: list[bytes] = []
"""Every packed command the counting connections wrote to a socket."""


class CountingConnection(redis.Connection):
    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        SENT.append(bytes(command[0] if isinstance(command, list) else command)[:40])
        super().send_packed_command(command, check_health)  # type: ignore[no-untyped-call]


class AsyncCountingConnection(aioredis.Connection):
    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        SENT.append(bytes(command[0] if isinstance(command, list) else command)[:40])
        await super().send_packed_command(command, check_health)


# --------------------------------------------------------------------------- values


def _not(*types: type) -> Callable[[object], bool]:
    """True for a value of none of ``types`` (a bool is never an int here)."""

    def check(value: object) -> bool:
        if isinstance(value, bool):
            return bool not in types
        return not isinstance(value, types)

    return check


LEASE = Lease("a", b"A", "t" * 32)
junk: st.SearchStrategy[Any] = st.deferred(
    lambda: st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True),
        st.text(max_size=8),
        st.binary(max_size=8),
        st.binary(max_size=8).map(bytearray),
        st.lists(st.integers(), max_size=3),
        st.tuples(st.text(max_size=3), st.integers()),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        st.frozensets(st.integers(), max_size=2),
        st.just(object()),
        st.just(LEASE),
        st.just(RetryPolicy()),
        st.just(1j),
        st.just(lambda: None),
    )
)


def wrong(*types: type) -> st.SearchStrategy[Any]:
    """A value of a type none of ``types`` is."""
    return junk.filter(_not(*types))


def ints(lo: int, hi: int) -> st.SearchStrategy[Any]:
    """A wrong int for the range ``lo..hi``, or no int at all."""
    out = st.one_of(
        st.integers(max_value=lo - 1), st.integers(min_value=hi + 1), st.sampled_from([lo - 1, hi + 1])
    )
    return st.one_of(wrong(int), out)


def flags() -> st.SearchStrategy[Any]:
    return wrong(bool)


bad_text = st.one_of(
    st.just(""),
    st.text(min_size=513, max_size=600),
    st.text(min_size=171, max_size=200).map(lambda s: "\u20ac" * 171 + s),  # 3-byte chars: > 512 bytes
    st.just("\ud800"),  # a lone surrogate that no escape explains
)
bad_id = st.one_of(wrong(str), bad_text)
bad_new_id = st.one_of(bad_id, st.just("a\udc80"))  # a new id must be real UTF-8
bad_token = st.one_of(wrong(str), st.just(""), st.just("t" * 129), st.just("\ud800"))
bad_lease = st.one_of(
    wrong(Lease),
    bad_id.map(lambda item_id: Lease(item_id, b"", "t" * 32)),
    bad_token.map(lambda token: Lease("a", b"", token)),
)
# complete without require_lease reads only the id of a Lease: its token is no argument there
bad_item = st.one_of(wrong(Lease, str), bad_text, bad_id.map(lambda item_id: Lease(item_id, b"", "t" * 32)))


def batches(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A batch that is no batch (a str, a dict, a number...), or one with a bad element among good ones."""
    spoiled = st.tuples(st.lists(good, max_size=3), bad, st.lists(good, max_size=3)).map(
        lambda parts: [*parts[0], parts[1], *parts[2]]
    )
    return st.one_of(wrong(list, tuple, frozenset), st.text(min_size=1, max_size=5), spoiled)


good_pair = st.just(("a", b"A"))
bad_pair = st.one_of(
    wrong(tuple, list),
    st.tuples(bad_new_id, st.just(b"A")),
    st.tuples(st.just("a"), wrong(bytes, bytearray, memoryview)),
    st.just(("a", b"A", b"B")),
    st.just(("a",)),
)
bad_reason = st.one_of(wrong(str), st.text(min_size=1025, max_size=1100))
bad_policy = st.one_of(wrong(RetryPolicy, type(None)), st.just({"max_attempts": 3}))


@dataclass
class Method:
    """A public method: its right arguments and, per parameter, the strategy of its bad values."""

    name: str
    good: dict[str, Any]
    bad: dict[str, st.SearchStrategy[Any]]
    positional: tuple[str, ...] = ()


QUEUE_METHODS = [
    Method(
        "add",
        {"item_id": "a", "data": b"A", "delay_ms": 0},
        {"item_id": bad_new_id, "data": wrong(bytes, bytearray, memoryview), "delay_ms": ints(0, MAX_MS)},
        ("item_id", "data"),
    ),
    Method(
        "add_many",
        {"items": [("a", b"A")], "delay_ms": 0},
        {"items": batches(good_pair, bad_pair), "delay_ms": ints(0, MAX_MS)},
        ("items",),
    ),
    Method(
        "lease",
        {"lease_ms": 1000, "block": True, "timeout_ms": 1},
        {"lease_ms": ints(1, MAX_MS), "block": flags(), "timeout_ms": ints(0, MAX_MS)},
        ("lease_ms",),
    ),
    Method(
        "lease_many",
        {"count": 2, "lease_ms": 1000},
        {"count": ints(1, 1000), "lease_ms": ints(1, MAX_MS)},
    ),
    Method(
        "renew",
        {"lease": LEASE, "lease_ms": 1000},
        {"lease": bad_lease, "lease_ms": ints(1, MAX_MS)},
        ("lease", "lease_ms"),
    ),
    Method(
        "renew_many",
        {"leases": [LEASE], "lease_ms": 1000},
        {"leases": batches(st.just(LEASE), bad_lease), "lease_ms": ints(1, MAX_MS)},
        ("leases", "lease_ms"),
    ),
    Method(
        "complete",
        {"item": "a", "require_lease": False},
        {"item": bad_item, "require_lease": flags()},
        ("item",),
    ),
    Method(
        "complete_many",
        {"items": ["a", LEASE], "require_lease": False},
        {"items": batches(st.just("a"), bad_item), "require_lease": flags()},
        ("items",),
    ),
    Method(
        "complete_and_lease",
        {"item": LEASE, "lease_ms": 1000, "require_lease": True},
        {"item": bad_item, "lease_ms": ints(1, MAX_MS), "require_lease": flags()},
        ("item", "lease_ms"),
    ),
    Method(
        "complete_and_lease_many",
        {"items": [LEASE], "count": 1, "lease_ms": 1000, "require_lease": False},
        {
            "items": st.one_of(batches(st.just(LEASE), bad_item), st.just([]), st.just(["a"] * 1001)),
            "count": ints(1, 1000),
            "lease_ms": ints(1, MAX_MS),
            "require_lease": flags(),
        },
        ("items", "count", "lease_ms"),
    ),
    Method(
        "release",
        {"lease": LEASE, "delay_ms": 0},
        {"lease": bad_lease, "delay_ms": ints(0, MAX_MS)},
        ("lease",),
    ),
    Method(
        "release_many",
        {"leases": [LEASE], "delay_ms": 0},
        {"leases": batches(st.just(LEASE), bad_lease), "delay_ms": ints(0, MAX_MS)},
        ("leases",),
    ),
    Method(
        "fail",
        {"lease": LEASE, "reason": "boom"},
        {"lease": bad_lease, "reason": bad_reason},
        ("lease", "reason"),
    ),
    Method("set_retry_policy", {"policy": RetryPolicy()}, {"policy": bad_policy}, ("policy",)),
    Method(
        "dead_items", {"offset": 0, "count": 10}, {"offset": ints(0, 100_000_000), "count": ints(1, 1000)}
    ),
    Method("dead_item", {"item_id": "a"}, {"item_id": bad_id}, ("item_id",)),
    Method("requeue_dead", {"ids": ["a"]}, {"ids": batches(st.just("a"), bad_id)}, ("ids",)),
    Method("purge_dead", {"ids": ["a"]}, {"ids": batches(st.just("a"), bad_id)}, ("ids",)),
    Method("light_clean", {"chunk": 100}, {"chunk": ints(1, 1000)}),
    Method("deep_clean", {"chunk": 100}, {"chunk": ints(1, 1000)}),
]

bad_prefix = st.one_of(
    wrong(str),
    st.just(""),
    st.just("a*"),
    st.just("jobs?"),
    st.just("x[1]"),
    st.just("\ud800"),
    st.text(min_size=513, max_size=600),
)


def policy_method() -> Method:
    good = {
        "max_attempts": 5,
        "backoff": "fixed",
        "base_ms": 1000,
        "cap_ms": 1000,
        "jitter_pct": 0,
        "dead_max_count": 10,
        "dead_max_age_ms": 1000,
    }
    bad = {name: ints(0, 10**15) for name in good if name != "backoff"}
    bad["backoff"] = st.one_of(wrong(str), st.sampled_from(["", "linear", "Fixed"]))
    return Method("RetryPolicy", good, bad)


def worker_method(name: str, queue: object, handler: Callable[..., Any]) -> Method:
    good = {
        "queue": queue,
        "handler": handler,
        "concurrency": 2,
        "lease_ms": 3000,
        "renew_interval_ms": None,
        "poll_timeout_ms": 1000,
        "clean_interval_ms": None,
        "shutdown_grace_ms": 0,
        "on_error": None,
        "logger": None,
    }
    bad = {
        "queue": wrong(),
        "handler": st.one_of(st.none(), st.integers(), st.text(max_size=3), st.just(b"x")),
        "concurrency": ints(1, 10_000),
        "lease_ms": ints(3, MAX_MS),
        "renew_interval_ms": st.one_of(
            wrong(int, type(None)), st.integers(max_value=0), st.integers(min_value=3000)
        ),
        "poll_timeout_ms": ints(1, MAX_MS),
        "clean_interval_ms": st.one_of(
            wrong(int, type(None)), st.integers(max_value=0), st.integers(min_value=MAX_MS + 1)
        ),
        "shutdown_grace_ms": ints(0, MAX_MS),
        "on_error": st.one_of(st.integers(), st.text(max_size=3), st.just(b"x")),
        "logger": st.one_of(wrong(type(None)), st.just("rwq")),
    }
    return Method(name, good, bad, ("queue", "handler"))


# --------------------------------------------------------------------------- the probe


@dataclass
class Figures:
    tried: int = 0
    typed: int = 0
    sent: int = 0
    untyped: list[str] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)

    def report(self, what: str) -> str:
        return f"{what}: bad calls tried {self.tried}, typed {self.typed}, commands sent {self.sent}"


def probe(method: Method, call: Callable[[Method, dict[str, Any]], Any], figures: Figures) -> None:
    """Call ``method`` EXAMPLES times with one bad argument; record what it raised and sent."""
    params = sorted(method.bad)

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
    )
    @given(data=st.data())
    def one(data: st.DataObject) -> None:
        param = data.draw(st.sampled_from(params), label="param")
        value = data.draw(method.bad[param], label=param)
        args = {**method.good, param: value}
        before = len(SENT)
        figures.tried += 1
        label = f"{method.name}({param}={value!r:.80})"
        try:
            call(method, args)
        except RwqError as exc:
            if isinstance(exc, (TypeError, ValueError)):
                figures.typed += 1
            else:
                figures.untyped.append(f"{label}: {type(exc).__name__}: {exc}")
        except Exception as exc:  # the point: anything else is untyped
            figures.untyped.append(f"{label}: {type(exc).__name__}: {exc}"[:200])
        else:
            figures.accepted.append(label)
        figures.sent += len(SENT) - before

    one()


def check(figures: Figures, what: str) -> None:
    print(figures.report(what))
    problems = [*figures.untyped[:10], *(f"accepted: {x}" for x in figures.accepted[:10])]
    assert not problems, figures.report(what) + "\n" + "\n".join(problems)
    assert figures.sent == 0, figures.report(what)


def _split(method: Method, args: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    positional = [args.pop(name) for name in method.positional]
    return positional, args


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def counted(redis_server: RedisServer) -> Iterator[redis.Redis]:
    pool = redis.ConnectionPool(host="127.0.0.1", port=redis_server.port, connection_class=CountingConnection)
    client = redis.Redis(connection_pool=pool)
    yield client
    pool.disconnect()


@pytest.fixture
async def acounted(redis_server: RedisServer) -> AsyncIterator[aioredis.Redis]:
    pool = aioredis.ConnectionPool(
        host="127.0.0.1", port=redis_server.port, connection_class=AsyncCountingConnection
    )
    client = aioredis.Redis(connection_pool=pool)
    yield client
    await client.aclose()


def test_counting_connection_counts(counted: redis.Redis) -> None:
    """The counter sees what a queue sends (else zero commands would prove nothing)."""
    before = len(SENT)
    WorkQueue(counted, "bad:args").counts()
    assert len(SENT) > before


# --------------------------------------------------------------------------- the tests


def test_sync_queue(counted: redis.Redis) -> None:
    queue = WorkQueue(counted, "bad:args")
    figures = Figures()
    for method in QUEUE_METHODS:
        probe(method, lambda m, args: getattr(queue, m.name)(*_split(m, args)[0], **args), figures)
    ctor = Method(
        "WorkQueue",
        {"redis": counted, "prefix": "p", "legacy_lease_key": False},
        {
            "redis": st.one_of(wrong(), st.just(aioredis.Redis())),
            "prefix": bad_prefix,
            "legacy_lease_key": flags(),
        },
        ("redis", "prefix"),
    )
    probe(ctor, lambda m, args: WorkQueue(*_split(m, args)[0], **args).counts(), figures)
    check(figures, "WorkQueue")


def test_sharded_queues(counted: redis.Redis, acounted: aioredis.Redis) -> None:
    """ShardedWorkQueue and its asyncio twin: the methods they share with WorkQueue, and shards."""
    queue = ShardedWorkQueue(counted, "bad:args", shards=3)
    figures = Figures()
    for method in QUEUE_METHODS:
        if hasattr(ShardedWorkQueue, method.name):
            probe(method, lambda m, args: getattr(queue, m.name)(*_split(m, args)[0], **args), figures)
    ctor = Method(
        "ShardedWorkQueue",
        {"redis": counted, "prefix": "p", "shards": 2},
        {
            "redis": wrong(),
            "prefix": st.one_of(bad_prefix, st.just("{p}")),
            "shards": st.one_of(
                st.none(),
                st.booleans(),
                st.floats(),
                st.text(),
                st.integers(max_value=0),
                st.integers(min_value=1025),
            ),
        },
        ("redis", "prefix"),
    )
    probe(ctor, lambda m, args: ShardedWorkQueue(*_split(m, args)[0], **args).counts(), figures)
    check(figures, "ShardedWorkQueue")
    loop = asyncio.new_event_loop()
    try:
        aqueue = AsyncShardedWorkQueue(acounted, "bad:args", shards=3)
        afigures = Figures()
        for method in QUEUE_METHODS:
            if hasattr(AsyncShardedWorkQueue, method.name):
                probe(
                    method,
                    lambda m, args: loop.run_until_complete(
                        getattr(aqueue, m.name)(*_split(m, args)[0], **args)
                    ),
                    afigures,
                )
        check(afigures, "AsyncShardedWorkQueue")
    finally:
        loop.run_until_complete(acounted.aclose())
        loop.close()


def test_async_queue(acounted: aioredis.Redis) -> None:
    loop = asyncio.new_event_loop()
    try:
        queue = AsyncWorkQueue(acounted, "bad:args")
        figures = Figures()
        for method in QUEUE_METHODS:
            probe(
                method,
                lambda m, args: loop.run_until_complete(getattr(queue, m.name)(*_split(m, args)[0], **args)),
                figures,
            )

        async def construct(m: Method, args: dict[str, Any]) -> None:
            await AsyncWorkQueue(*_split(m, args)[0], **args).counts()

        ctor = Method(
            "AsyncWorkQueue",
            {"redis": acounted, "prefix": "p", "legacy_lease_key": False},
            {
                "redis": st.one_of(wrong(), st.just(redis.Redis())),
                "prefix": bad_prefix,
                "legacy_lease_key": flags(),
            },
            ("redis", "prefix"),
        )
        probe(ctor, lambda m, args: loop.run_until_complete(construct(m, args)), figures)
        check(figures, "AsyncWorkQueue")
    finally:
        loop.run_until_complete(acounted.aclose())
        loop.close()


def test_workers_and_settings(counted: redis.Redis) -> None:
    figures = Figures()
    queue = WorkQueue(counted, "bad:args")
    aqueue = AsyncWorkQueue(
        aioredis.Redis(connection_pool=aioredis.ConnectionPool(connection_class=AsyncCountingConnection)),
        "bad:args",
    )

    async def ahandler(job: object) -> None:
        return None

    probe(
        worker_method("Worker", queue, lambda job: None),
        lambda m, args: Worker(*_split(m, args)[0], **args),
        figures,
    )
    probe(
        worker_method("AsyncWorker", aqueue, ahandler),
        lambda m, args: AsyncWorker(*_split(m, args)[0], **args),
        figures,
    )
    probe(policy_method(), lambda m, args: RetryPolicy(**args), figures)
    check(figures, "Worker, AsyncWorker, RetryPolicy")


def test_wrong_kind_of_client_is_refused_with_a_clear_message() -> None:
    with pytest.raises(TypeError, match=r"not a redis\.asyncio one: use AsyncWorkQueue") as sync_error:
        WorkQueue(aioredis.Redis(), "jobs")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"not a synchronous one: use WorkQueue") as async_error:
        AsyncWorkQueue(redis.Redis(), "jobs")  # type: ignore[arg-type]
    assert isinstance(sync_error.value, RwqError)
    assert isinstance(async_error.value, RwqError)


def test_the_typed_errors_keep_idiomatic_excepts_working() -> None:
    with pytest.raises(TypeError):
        RetryPolicy(max_attempts="3")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_attempts must be in 0"):
        RetryPolicy(max_attempts=-1)
