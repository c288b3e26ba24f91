"""Bad input: InvalidArgument, raised before any I/O, with nothing written to Redis.

Each bad call runs against a populated queue, through the sync and the asyncio client; the
keyspace must be byte-for-byte the same afterwards and no queue command (EVALSHA, EVAL, BLMOVE,
SCAN) may have reached the server. The sans-IO plans are also checked directly: a bad argument
must raise on the plan's first step, before it yields a command.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.retry import Retry

from rwq import AsyncWorkQueue, InvalidArgument, Lease, LeaseLost, RedisFailure, RwqError, WorkQueue
from rwq import UnsupportedServer as UnsupportedServerError
from rwq._shell import translate
from rwq.conformance.redis_server import RedisServer, free_port
from rwq.errors import error_from_script
from rwq.protocol import operations as ops
from rwq.protocol import validation as v
from rwq.protocol.commands import Call, RunScript

MAX_MS = 31_536_000_000
TOKEN = "t" * 32
GOOD = Lease("a", b"A", TOKEN)


# --------------------------------------------------------------------------- helpers


def snapshot(r: redis.Redis) -> dict[bytes, tuple[bytes | None, bool]]:
    """Every key, its serialized value and whether it has a TTL."""
    return {key: (r.dump(key), r.pttl(key) >= 0) for key in sorted(r.keys("*"))}  # type: ignore[misc]


SENT: list[str] = []
"""Every command sent by the clients under test (the counted_* fixtures), in order."""


class CountedConnection(redis.Connection):
    def send_command(self, *args: Any, **kwargs: Any) -> None:
        SENT.append(str(args[0]))
        super().send_command(*args, **kwargs)  # type: ignore[no-untyped-call]


class AsyncCountedConnection(aioredis.Connection):
    async def send_command(self, *args: Any, **kwargs: Any) -> None:
        SENT.append(str(args[0]))
        await super().send_command(*args, **kwargs)


@dataclass(frozen=True)
class Bad:
    """One invalid call: a method of the queue, its arguments, and a readable id."""

    label: str
    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


def many_then_bad(bad_id: Any) -> list[tuple[Any, Any]]:
    return [*((f"ok{n}", b"") for n in range(1500)), (bad_id, b"")]


BAD_CALLS = [
    # ids of new items
    Bad("add-empty-id", "add", ("", b"x")),
    Bad("add-id-513-bytes", "add", ("x" * 513, b"x")),
    Bad("add-id-514-bytes-multibyte", "add", ("é" * 257, b"x")),
    Bad("add-lone-high-surrogate", "add", ("a\ud800b", b"x")),
    Bad("add-lone-low-surrogate", "add", ("a\udcffb", b"x")),
    Bad("add-int-id", "add", (5, b"x")),
    Bad("add-none-id", "add", (None, b"x")),
    Bad("add-bytes-id", "add", (b"a", b"x")),
    # payloads
    Bad("add-str-payload", "add", ("a", "text")),
    Bad("add-int-payload", "add", ("a", 5)),
    Bad("add-none-payload", "add", ("a", None)),
    Bad("add-negative-delay", "add", ("a", b"x"), {"delay_ms": -1}),
    Bad("add-float-delay", "add", ("a", b"x"), {"delay_ms": 1.5}),
    # add_many: one bad pair spoils the whole call, even after valid ones and across chunks
    Bad("add_many-empty-id-second", "add_many", ([("new", b"1"), ("", b"2")],)),
    Bad("add_many-str-payload-second", "add_many", ([("new", b"1"), ("new2", "s")],)),
    Bad("add_many-bad-id-in-second-chunk", "add_many", (many_then_bad(""),)),
    Bad("add_many-surrogate-in-second-chunk", "add_many", (many_then_bad("\ud800"),)),
    # lease durations
    *(
        Bad(f"lease-lease_ms-{value!r}", "lease", (value,))
        for value in (0, -1, True, False, 1.5, 1000.0, "1000", None, MAX_MS + 1)
    ),
    *(
        Bad(f"lease-block-timeout-{value!r}", "lease", (1000,), {"block": True, "timeout_ms": value})
        for value in (-1, MAX_MS + 1, 1.5, True, "10")
    ),
    # lease_many counts
    *(
        Bad(f"lease_many-count-{value!r}", "lease_many", kwargs={"count": value, "lease_ms": 1000})
        for value in (0, -1, 1001, True, 2.0)
    ),
    Bad("lease_many-lease_ms-0", "lease_many", kwargs={"count": 5, "lease_ms": 0}),
    Bad("lease_many-lease_ms-over-max", "lease_many", kwargs={"count": 5, "lease_ms": MAX_MS + 1}),
    # renew
    *(Bad(f"renew-lease_ms-{value!r}", "renew", (GOOD, value)) for value in (0, -5, True, 2.5, MAX_MS + 1)),
    Bad("renew-empty-id", "renew", (Lease("", b"", TOKEN), 1000)),
    Bad("renew-id-513-bytes", "renew", (Lease("x" * 513, b"", TOKEN), 1000)),
    Bad("renew-int-id", "renew", (Lease(5, b"", TOKEN), 1000)),  # type: ignore[arg-type]
    Bad("renew_many-second-bad", "renew_many", ([GOOD, Lease("", b"", TOKEN)], 1000)),
    Bad("renew_many-lease_ms-0", "renew_many", ([GOOD], 0)),
    # complete
    Bad("complete-empty-id", "complete", ("",)),
    Bad("complete-id-513-bytes", "complete", ("x" * 513,)),
    Bad("complete-int-id", "complete", (5,)),
    Bad("complete-none", "complete", (None,)),
    Bad("complete-lone-surrogate", "complete", ("a\ud800",)),
    Bad("complete-str-with-require_lease", "complete", ("a",), {"require_lease": True}),
    Bad("complete_many-second-empty", "complete_many", (["a", ""],)),
    Bad("complete_many-mixed-require_lease", "complete_many", ([GOOD, "b"],), {"require_lease": True}),
    Bad("complete_many-bad-id-in-second-chunk", "complete_many", ([*(f"i{n}" for n in range(1200)), ""],)),
    # release
    Bad("release-empty-id", "release", (Lease("", b"", TOKEN),)),
    Bad("release-id-513-bytes", "release", (Lease("y" * 513, b"", TOKEN),)),
    Bad("release-negative-delay", "release", (GOOD,), {"delay_ms": -1}),
    Bad("release_many-second-bad", "release_many", ([GOOD, Lease("", b"", TOKEN)],)),
    # cleaning
    *(
        Bad(f"light_clean-chunk-{value!r}", "light_clean", (), {"chunk": value})
        for value in (0, 1001, True, 1.5)
    ),
    *(
        Bad(f"deep_clean-chunk-{value!r}", "deep_clean", (), {"chunk": value})
        for value in (0, 1001, -1, None)
    ),
]


@pytest.fixture
def populated(r: redis.Redis, redis_server: RedisServer, prefix: str) -> Iterator[WorkQueue]:
    """Items in both lists and a lease, and the server check done: a stray write would show.

    Its client counts what it sends, so other tests' traffic on the server cannot blur the check.
    """
    pool = redis.ConnectionPool(host="127.0.0.1", port=redis_server.port, connection_class=CountedConnection)
    queue = WorkQueue(redis.Redis(connection_pool=pool), prefix)
    queue.add_many([("a", b"A"), ("b", b"B"), ("c", b"C")])
    held = queue.lease(60_000)
    assert held is not None
    assert "EVALSHA" in SENT  # the counting connection is the one the queue uses
    yield queue
    pool.disconnect()


@pytest.fixture
async def apopulated(r: redis.Redis, redis_server: RedisServer, prefix: str) -> AsyncIterator[AsyncWorkQueue]:
    """:func:`populated` for the asyncio client."""
    pool = aioredis.ConnectionPool(
        host="127.0.0.1", port=redis_server.port, connection_class=AsyncCountedConnection
    )
    client = aioredis.Redis(connection_pool=pool)
    queue = AsyncWorkQueue(client, prefix)
    await queue.add_many([("a", b"A"), ("b", b"B"), ("c", b"C")])
    assert await queue.lease(60_000) is not None
    assert "EVALSHA" in SENT  # the counting connection is the one the queue uses
    yield queue
    await client.aclose()
    await pool.disconnect()


# --------------------------------------------------------------------------- through the clients


@pytest.mark.parametrize("bad", BAD_CALLS, ids=lambda bad: bad.label)
def test_sync_bad_call_raises_and_writes_nothing(r: redis.Redis, populated: WorkQueue, bad: Bad) -> None:
    before = snapshot(r)
    SENT.clear()
    with pytest.raises(InvalidArgument) as info:
        getattr(populated, bad.method)(*bad.args, **bad.kwargs)
    assert info.value.code == "INVALID_ARGUMENT"
    assert isinstance(info.value, ValueError)
    assert SENT == []
    assert snapshot(r) == before


@pytest.mark.parametrize("bad", BAD_CALLS, ids=lambda bad: bad.label)
async def test_async_bad_call_raises_and_writes_nothing(
    r: redis.Redis, apopulated: AsyncWorkQueue, bad: Bad
) -> None:
    before = snapshot(r)
    SENT.clear()
    with pytest.raises(InvalidArgument):
        await getattr(apopulated, bad.method)(*bad.args, **bad.kwargs)
    assert SENT == []
    assert snapshot(r) == before


@pytest.mark.parametrize("prefix_value", ["", "a*", "a?b", "a[b", "a]b", "a\\b", "x" * 513, 5, None, b"p"])
def test_bad_prefix(r: redis.Redis, prefix_value: Any) -> None:
    with pytest.raises(InvalidArgument):
        WorkQueue(r, prefix_value)
    with pytest.raises(InvalidArgument):
        AsyncWorkQueue(aioredis.Redis(), prefix_value)
    assert r.dbsize() == 0


def test_prefix_with_lone_surrogate(r: redis.Redis) -> None:
    """A prefix that cannot be encoded as UTF-8 must be refused as the prefix is, not later."""
    with pytest.raises(InvalidArgument):
        WorkQueue(r, "jobs\ud800:{x}")
    assert r.dbsize() == 0


def test_prefix_of_512_bytes_is_accepted(r: redis.Redis) -> None:
    q = WorkQueue(r, "p" * 512)
    assert q.add("a", b"") is True


def test_decode_responses_client_is_refused(redis_server: RedisServer, prefix: str) -> None:
    client = redis_server.client(decode_responses=True)
    try:
        with pytest.raises(InvalidArgument, match="decode_responses"):
            WorkQueue(client, prefix)
    finally:
        client.close()
    async_client = aioredis.Redis(port=redis_server.port, decode_responses=True)
    with pytest.raises(InvalidArgument, match="decode_responses"):
        AsyncWorkQueue(async_client, prefix)


def test_bad_token_in_second_chunk_writes_nothing(r: redis.Redis, queue: WorkQueue) -> None:
    """1001 leases whose last token is empty: the plan must refuse before the first chunk is sent."""
    queue.add_many([(f"i{n}", b"") for n in range(1000)])
    leased = queue.lease_many(count=1000, lease_ms=60_000)
    before = snapshot(r)
    with pytest.raises(InvalidArgument):
        queue.release_many([*leased, Lease("i0", b"", "")])
    assert snapshot(r) == before
    assert queue.counts().processing == 1000


def test_first_call_of_a_fresh_client_validates_before_any_io() -> None:
    """No server listens on this port: any I/O would fail with RedisFailure, not InvalidArgument."""
    client = redis.Redis(
        host="127.0.0.1", port=free_port(), retry=Retry(NoBackoff(), 0), socket_connect_timeout=1
    )
    q = WorkQueue(client, "jobs")
    with pytest.raises(InvalidArgument):
        q.lease(0)
    with pytest.raises(InvalidArgument):
        q.add("", b"")


async def test_async_first_call_of_a_fresh_client_validates_before_any_io() -> None:
    client = aioredis.Redis(
        host="127.0.0.1", port=free_port(), retry=AsyncRetry(NoBackoff(), 0), socket_connect_timeout=1
    )
    q = AsyncWorkQueue(client, "jobs")
    try:
        with pytest.raises(InvalidArgument):
            await q.lease_many(count=0, lease_ms=1000)
    finally:
        await client.aclose()


# --------------------------------------------------------------------------- ids from other clients


def test_non_utf8_id_from_another_client_round_trips(r: redis.Redis, queue: WorkQueue) -> None:
    """SPEC RWQ-ENC-006: existing items with non-UTF-8 ids can be leased and completed."""
    r.set(queue.keys.queue.replace(b":queue", b":item:\xff\xfe"), b"raw")
    r.lpush(queue.keys.queue, b"\xff\xfe")
    held = queue.lease(5000)
    assert held is not None
    assert held.id == "\udcff\udcfe"
    assert held.data == b"raw"
    assert queue.keys.item(held.id).endswith(b":item:\xff\xfe")
    assert queue.renew(held, 5000) is True
    assert queue.complete(held, require_lease=True) is True
    assert r.dbsize() == 0


def test_non_utf8_id_cannot_be_created(r: redis.Redis, queue: WorkQueue) -> None:
    with pytest.raises(InvalidArgument):
        queue.add("\udcff", b"")
    assert r.dbsize() == 0


# --------------------------------------------------------------------------- the sans-IO plans


PlanFactory = Callable[[ops.QueueKeys], Any]
KEYS = ops.QueueKeys("p:{x}")

BAD_PLANS: list[tuple[str, PlanFactory]] = [
    ("add-empty-id", lambda k: ops.add(k, [("", b"")])),
    ("add-delay", lambda k: ops.add(k, [("a", b"")], delay_ms=-1)),
    ("lease-0", lambda k: ops.lease(k, 0)),
    ("lease-count", lambda k: ops.lease(k, 1000, count=0)),
    ("lease-blocking-many", lambda k: ops.lease(k, 1000, count=2, block=True)),
    ("lease-blocking-timeout", lambda k: ops.lease(k, 1000, block=True, timeout_ms=-1)),
    ("renew-0", lambda k: ops.renew(k, [GOOD], 0)),
    ("renew-bad-id", lambda k: ops.renew(k, [Lease("", b"", TOKEN)], 1000)),
    ("complete-bad-id", lambda k: ops.complete(k, [""])),
    ("complete-owner-str", lambda k: ops.complete(k, ["a"], require_lease=True)),
    ("release-bad-id", lambda k: ops.release(k, [Lease("", b"", TOKEN)])),
    ("light_clean-chunk", lambda k: ops.light_clean(k, chunk=0)),
    ("deep_clean-chunk", lambda k: ops.deep_clean(k, chunk=1001)),
]

BAD_TOKEN_PLANS: list[tuple[str, PlanFactory]] = [
    ("renew-empty-token", lambda k: ops.renew(k, [Lease("a", b"", "")], 1000)),
    ("renew-token-129-bytes", lambda k: ops.renew(k, [Lease("a", b"", "t" * 129)], 1000)),
    ("release-empty-token", lambda k: ops.release(k, [Lease("a", b"", "")])),
    ("complete-owner-empty-token", lambda k: ops.complete(k, [Lease("a", b"", "")], require_lease=True)),
]


@pytest.mark.parametrize(("label", "factory"), BAD_PLANS, ids=[label for label, _ in BAD_PLANS])
def test_plan_raises_before_its_first_command(label: str, factory: PlanFactory) -> None:
    plan = factory(KEYS)
    with pytest.raises(InvalidArgument):
        next(plan)


@pytest.mark.parametrize(("label", "factory"), BAD_TOKEN_PLANS, ids=[label for label, _ in BAD_TOKEN_PLANS])
def test_plan_checks_tokens_before_its_first_command(label: str, factory: PlanFactory) -> None:
    """SPEC RWQ-ENC-004 (tokens are 1..128 bytes) and RWQ-ERR-002 (validate before sending)."""
    plan = factory(KEYS)
    with pytest.raises(InvalidArgument):
        next(plan)


def test_valid_plan_yields_a_script_command() -> None:
    plan = ops.add(KEYS, [("a", b"x")])
    command = next(plan)
    assert isinstance(command, RunScript)
    assert command.script.name == "add"
    assert command.keys == (b"p:{x}:queue",)
    assert command.args == (0, b"a", b"x")


def test_check_server_refuses_old_redis() -> None:
    plan = ops.check_server(KEYS)
    command = next(plan)
    assert isinstance(command, Call)
    assert command.args == ("INFO", "server")
    with pytest.raises(UnsupportedServerError) as info:
        plan.send({"redis_version": "6.0.16"})
    assert info.value.code == "UNSUPPORTED_SERVER"


def test_check_server_accepts_6_2_and_tolerates_refused_config() -> None:
    plan = ops.check_server(KEYS)
    next(plan)
    command = plan.send({"redis_version": "6.2.0"})
    assert isinstance(command, Call)
    assert command.errors_as_values
    with pytest.raises(StopIteration):
        plan.send(ResponseError("NOPERM this user has no permissions to run the 'config' command"))


# --------------------------------------------------------------------------- errors and helpers


def test_error_codes_and_hierarchy() -> None:
    for cls, code in (
        (InvalidArgument, "INVALID_ARGUMENT"),
        (LeaseLost, "LEASE_LOST"),
        (UnsupportedServerError, "UNSUPPORTED_SERVER"),
        (RedisFailure, "REDIS_ERROR"),
    ):
        assert issubclass(cls, RwqError)
        assert cls.code == code


def test_error_from_script() -> None:
    invalid = error_from_script("RWQ_INVALID_ARGUMENT lease_ms must be an integer")
    assert isinstance(invalid, InvalidArgument)
    assert str(invalid) == "lease_ms must be an integer"
    assert isinstance(error_from_script("RWQ_LEASE_LOST gone"), LeaseLost)
    unknown = error_from_script("RWQ_SOMETHING_NEW text")
    assert type(unknown) is RwqError
    assert error_from_script("ERR unknown command") is None
    assert error_from_script("WRONGTYPE Operation against a key") is None


def test_translate() -> None:
    assert isinstance(translate(ResponseError("RWQ_INVALID_ARGUMENT x")), InvalidArgument)
    failure = translate(RedisConnectionError("Connection refused"))
    assert isinstance(failure, RedisFailure)
    assert failure.code == "REDIS_ERROR"
    assert isinstance(translate(ResponseError("WRONGTYPE x")), RedisFailure)


@pytest.mark.parametrize(
    ("key", "tag"),
    [
        ("{jobs}", "jobs"),
        ("a:{b}:c", "b"),
        ("{}", None),
        ("{a", None),
        ("a}", None),
        ("a{}{b}", None),
        ("x", None),
    ],
)
def test_hash_tag(key: str, tag: str | None) -> None:
    assert v.hash_tag(key) == tag


def test_encode_decode_id() -> None:
    assert v.encode_new_id("é") == b"\xc3\xa9"
    assert v.decode_id(b"\xff") == "\udcff"
    assert v.encode_id("\udcff") == b"\xff"
    assert v.encode_id("x" * 512) == b"x" * 512
    with pytest.raises(InvalidArgument):
        v.encode_id("x" * 513)


@pytest.mark.parametrize("value", [0, 1, MAX_MS])
def test_duration_bounds_accepted(value: int) -> None:
    assert v.duration_ms(value, "timeout_ms", minimum=0) == value


@pytest.mark.parametrize("value", [1, 1000])
def test_batch_bounds_accepted(value: int) -> None:
    assert v.batch_size(value, "count") == value


def test_payload_kinds() -> None:
    assert v.payload(b"x") == b"x"
    assert v.payload(bytearray(b"y")) == b"y"
    assert v.payload(memoryview(b"z")) == b"z"
    with pytest.raises(InvalidArgument):
        v.payload("x")
