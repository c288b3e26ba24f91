"""Every RWQ/1 operation through the asyncio client, :class:`AsyncWorkQueue`.

State is inspected with the synchronous ``r`` / ``fr`` clients; lease expiry uses the frozen-clock
server. Bad input for the asyncio client is covered in ``test_validation.py``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis
from redis.asyncio.connection import Connection as AsyncConnection
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff

from queue_view import processing_list, queue_list
from rwq import (
    AsyncWorkQueue,
    CleanReport,
    Counts,
    InvalidArgument,
    Lease,
    LeaseLost,
    Outcome,
    RedisFailure,
    RwqWarning,
    WrongType,
)
from rwq.conformance.redis_server import RedisServer


def snapshot(r: redis.Redis) -> dict[bytes, tuple[bytes | None, int]]:
    """Keys, values and TTLs in whole seconds (a write resets a TTL; reading it twice does not)."""
    return {key: (r.dump(key), round(r.pttl(key) / 1000)) for key in sorted(r.keys("*"))}  # type: ignore[misc]


def script_calls(r: redis.Redis) -> int:
    stats = r.info("commandstats")
    return sum(int(stats.get(f"cmdstat_{name}", {}).get("calls", 0)) for name in ("evalsha", "eval"))


def eval_calls(r: redis.Redis) -> int:
    return int(r.info("commandstats").get("cmdstat_eval", {}).get("calls", 0))


@pytest.fixture
async def aother(redis_server: RedisServer, aqueue: AsyncWorkQueue) -> AsyncIterator[AsyncWorkQueue]:
    """A second asyncio worker on the same queue, with its own connection pool."""
    client = aioredis.Redis(host="127.0.0.1", port=redis_server.port)
    yield AsyncWorkQueue(client, aqueue.prefix)
    await client.aclose()


@pytest.fixture
async def afr(frozen_server: RedisServer, fr: redis.Redis) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis(host="127.0.0.1", port=frozen_server.port)
    yield client
    await client.aclose()


@pytest.fixture
def afq(afr: aioredis.Redis, prefix: str) -> AsyncWorkQueue:
    return AsyncWorkQueue(afr, prefix)


@pytest.fixture
async def afother(frozen_server: RedisServer, afq: AsyncWorkQueue) -> AsyncIterator[AsyncWorkQueue]:
    client = aioredis.Redis(host="127.0.0.1", port=frozen_server.port)
    yield AsyncWorkQueue(client, afq.prefix)
    await client.aclose()


async def add_later(q: AsyncWorkQueue, item_id: str, data: bytes, delay_s: float = 0.2) -> None:
    await asyncio.sleep(delay_s)
    assert await q.add(item_id, data) is True


# --------------------------------------------------------------------------- add / add_many


async def test_add_idempotent(r: redis.Redis, aqueue: AsyncWorkQueue) -> None:
    assert await aqueue.add("a", b"first") is True
    assert await aqueue.add("a", b"second") is False
    assert r.get(aqueue.keys.item("a")) == b"first"
    assert queue_list(r, aqueue) == ["a"]


async def test_add_many_duplicates_and_existing(r: redis.Redis, aqueue: AsyncWorkQueue) -> None:
    await aqueue.add("b", b"old")
    assert await aqueue.add_many([("a", b"1"), ("b", b"2"), ("a", b"3"), ("c", b"4")]) == [
        True,
        False,
        False,
        True,
    ]
    assert r.get(aqueue.keys.item("a")) == b"1"
    assert r.get(aqueue.keys.item("b")) == b"old"
    assert await aqueue.add_many([]) == []


async def test_add_many_over_1000_split_and_fifo(r: redis.Redis, aqueue: AsyncWorkQueue) -> None:
    await aqueue.counts()
    before = script_calls(r)
    items = [(f"i{n:04d}", str(n).encode()) for n in range(2100)]
    assert await aqueue.add_many(items) == [True] * 2100
    assert script_calls(r) - before == 3
    leased = [
        *await aqueue.lease_many(count=1000, lease_ms=10_000),
        *await aqueue.lease_many(count=1000, lease_ms=10_000),
    ]
    leased += await aqueue.lease_many(count=1000, lease_ms=10_000)
    assert [(held.id, held.data) for held in leased] == items


# --------------------------------------------------------------------------- lease


async def test_lease_empty_and_basic(r: redis.Redis, aqueue: AsyncWorkQueue) -> None:
    assert await aqueue.lease(1000) is None
    assert await aqueue.lease_many(count=3, lease_ms=1000) == []
    await aqueue.add("a", b"\x00A")
    held = await aqueue.lease(5000)
    assert held is not None
    assert (held.id, held.data) == ("a", b"\x00A")
    assert r.get(aqueue.keys.lease("a")) == held.token.encode()
    assert 4000 < r.pttl(aqueue.keys.lease("a")) <= 5000
    assert processing_list(r, aqueue) == ["a"]


async def test_lease_drops_ghosts(r: redis.Redis, aqueue: AsyncWorkQueue) -> None:
    r.rpush(aqueue.keys.queue, *(f"ghost{n}" for n in range(1200)))
    await aqueue.add("real", b"R")
    held = await aqueue.lease(1000)
    assert held is not None
    assert held.id == "real"
    assert queue_list(r, aqueue) == []
    assert processing_list(r, aqueue) == ["real"]


async def test_lease_skips_duplicate_held_elsewhere(r: redis.Redis, aqueue: AsyncWorkQueue) -> None:
    await aqueue.add_many([("a", b""), ("b", b"")])
    held = await aqueue.lease(60_000)
    assert held is not None
    assert held.id == "a"
    r.rpush(aqueue.keys.queue, "a")
    nxt = await aqueue.lease(60_000)
    assert nxt is not None
    assert nxt.id == "b"
    assert processing_list(r, aqueue) == ["b", "a"]
    assert r.get(aqueue.keys.lease("a")) == held.token.encode()


async def test_lease_many_order_and_token(r: redis.Redis, aqueue: AsyncWorkQueue) -> None:
    await aqueue.add_many([(f"i{n}", b"") for n in range(5)])
    leased = await aqueue.lease_many(count=3, lease_ms=1000)
    assert [held.id for held in leased] == ["i0", "i1", "i2"]
    assert len({held.token for held in leased}) == 1
    assert await aqueue.counts() == Counts(2, 3)


async def test_blocking_lease_wakes_up_on_concurrent_add(
    r: redis.Redis, aqueue: AsyncWorkQueue, aother: AsyncWorkQueue
) -> None:
    await aqueue.counts()
    started = time.monotonic()
    producer = asyncio.create_task(add_later(aother, "late", b"L"))
    held = await aqueue.lease(5000, block=True, timeout_ms=10_000)
    await producer
    assert held is not None
    assert (held.id, held.data) == ("late", b"L")
    assert 0.15 < time.monotonic() - started < 5
    assert r.get(aqueue.keys.lease("late")) == held.token.encode()


async def test_blocking_lease_same_client_concurrent_add(aqueue: AsyncWorkQueue) -> None:
    """One AsyncWorkQueue (one pool) waiting in BLMOVE and adding at the same time."""
    producer = asyncio.create_task(add_later(aqueue, "late", b"L", 0.1))
    held = await aqueue.lease(5000, block=True)
    await producer
    assert held is not None
    assert held.id == "late"


async def test_blocking_lease_timeout(r: redis.Redis, aqueue: AsyncWorkQueue) -> None:
    started = time.monotonic()
    assert await aqueue.lease(1000, block=True, timeout_ms=300) is None
    assert 0.25 < time.monotonic() - started < 3
    assert r.dbsize() == 0


async def test_blocking_lease_skips_ghost(
    r: redis.Redis, aqueue: AsyncWorkQueue, aother: AsyncWorkQueue
) -> None:
    async def produce() -> None:
        await asyncio.sleep(0.1)
        r.lpush(aqueue.keys.queue, "ghost")
        await add_later(aother, "real", b"R", 0.1)

    producer = asyncio.create_task(produce())
    held = await aqueue.lease(1000, block=True, timeout_ms=10_000)
    await producer
    assert held is not None
    assert held.id == "real"
    assert processing_list(r, aqueue) == ["real"]


async def test_many_concurrent_blocking_leases_each_get_one(
    r: redis.Redis, aqueue: AsyncWorkQueue, aother: AsyncWorkQueue
) -> None:
    async def produce() -> None:
        await asyncio.sleep(0.1)
        await aother.add_many([(f"i{n}", b"") for n in range(6)])

    waiters = [aqueue.lease(60_000, block=True, timeout_ms=5000) for _ in range(6)]
    results = await asyncio.gather(produce(), *waiters)
    leased = [held for held in results[1:] if held is not None]
    assert sorted(held.id for held in leased) == [f"i{n}" for n in range(6)]
    assert await aqueue.counts() == Counts(0, 6)


# --------------------------------------------------------------------------- renew


async def test_renew(frozen_server: RedisServer, fr: redis.Redis, afq: AsyncWorkQueue) -> None:
    await afq.add("a", b"")
    held = await afq.lease(1000)
    assert held is not None
    frozen_server.advance(700)
    assert await afq.renew(held, 3000) is True
    assert 2990 < fr.pttl(afq.keys.lease("a")) <= 3000
    assert await afq.renew(Lease("a", b"", "0" * 32), 60_000) is False
    assert fr.pttl(afq.keys.lease("a")) <= 3000
    assert await afq.renew_many([held, held], 2000) == [True, True]


async def test_renew_false_after_expiry(
    frozen_server: RedisServer, fr: redis.Redis, afq: AsyncWorkQueue
) -> None:
    await afq.add("a", b"")
    held = await afq.lease(1000)
    assert held is not None
    frozen_server.advance(1200)
    assert await afq.renew(held, 5000) is False
    assert fr.exists(afq.keys.lease("a")) == 0


async def test_renew_false_after_takeover(
    frozen_server: RedisServer, fr: redis.Redis, afq: AsyncWorkQueue, afother: AsyncWorkQueue
) -> None:
    await afq.add("a", b"")
    stale = await afq.lease(1000)
    assert stale is not None
    frozen_server.advance(1200)
    assert (await afq.light_clean()).requeued == ("a",)
    fresh = await afother.lease(1000)
    assert fresh is not None
    assert await afq.renew(stale, 60_000) is False
    assert fr.get(afq.keys.lease("a")) == fresh.token.encode()


# --------------------------------------------------------------------------- complete


async def test_complete_first_completer_once(r: redis.Redis, aqueue: AsyncWorkQueue) -> None:
    await aqueue.add("a", b"")
    held = await aqueue.lease(5000)
    assert held is not None
    results = await asyncio.gather(*(aqueue.complete(held) for _ in range(10)), aqueue.complete("a"))
    assert sorted(results) == [False] * 10 + [True]
    assert r.dbsize() == 0


async def test_complete_removes_both_lease_keys(r: redis.Redis, ar: aioredis.Redis, prefix: str) -> None:
    q = AsyncWorkQueue(ar, prefix, legacy_lease_key=True)
    await q.add("a", b"")
    held = await q.lease(5000)
    assert held is not None
    assert r.exists(q.keys.lease("a"), q.keys.legacy_lease("a")) == 2
    assert await q.complete(held) is True
    assert r.dbsize() == 0


async def test_complete_require_lease_lost_changes_nothing(
    frozen_server: RedisServer, fr: redis.Redis, afq: AsyncWorkQueue, afother: AsyncWorkQueue
) -> None:
    await afq.add("a", b"")
    stale = await afq.lease(1000)
    assert stale is not None
    frozen_server.advance(1500)
    await afq.light_clean()
    fresh = await afother.lease(60_000)
    assert fresh is not None
    before = snapshot(fr)
    with pytest.raises(LeaseLost):
        await afq.complete(stale, require_lease=True)
    assert await afq.complete_many([stale], require_lease=True) == [Outcome.LEASE_LOST]
    assert snapshot(fr) == before
    assert await afother.complete(fresh, require_lease=True) is True


async def test_complete_requeued_item_removes_queued_copy(
    frozen_server: RedisServer, fr: redis.Redis, afq: AsyncWorkQueue
) -> None:
    await afq.add_many([("a", b""), ("b", b"")])
    held = await afq.lease(1000)
    assert held is not None
    frozen_server.advance(1500)
    assert (await afq.light_clean()).requeued == ("a",)
    assert await afq.complete(held) is True
    assert queue_list(fr, afq) == ["b"]
    assert processing_list(fr, afq) == []


async def test_complete_and_lease(frozen_server: RedisServer, fr: redis.Redis, afq: AsyncWorkQueue) -> None:
    await afq.add_many([("a", b"A"), ("b", b"B"), ("c", b"C")])
    held = await afq.lease(1000)
    assert held is not None
    outcome, following = await afq.complete_and_lease(held, 5000, require_lease=True)
    assert outcome is Outcome.DONE
    assert following is not None
    assert following.id == "b"
    frozen_server.advance(6000)
    outcomes, leases = await afq.complete_and_lease_many([following], 5, 5000, require_lease=True)
    assert outcomes == [Outcome.LEASE_LOST]
    assert [lease.id for lease in leases] == ["c"]
    assert fr.get(afq.keys.item("b")) == b"B"


async def test_complete_many(r: redis.Redis, aqueue: AsyncWorkQueue) -> None:
    await aqueue.add_many([(f"i{n}", b"") for n in range(1100)])
    assert await aqueue.complete_many([f"i{n}" for n in range(1100)] + ["i0"]) == [Outcome.DONE] * 1100 + [
        Outcome.GONE
    ]
    assert r.dbsize() == 0


# --------------------------------------------------------------------------- release


async def test_release(r: redis.Redis, aqueue: AsyncWorkQueue) -> None:
    await aqueue.add_many([("a", b""), ("b", b"")])
    held = await aqueue.lease(5000)
    assert held is not None
    assert held.id == "a"
    with pytest.raises(LeaseLost):
        await aqueue.release(Lease("a", b"", "0" * 32))
    assert await aqueue.release(held) is True
    assert queue_list(r, aqueue) == ["a", "b"]
    assert r.exists(aqueue.keys.lease("a")) == 0
    with pytest.raises(LeaseLost):
        await aqueue.release(held)


async def test_release_gone_item(r: redis.Redis, aqueue: AsyncWorkQueue) -> None:
    await aqueue.add_many([("a", b""), ("b", b"")])
    a, b = await aqueue.lease_many(count=2, lease_ms=5000)
    r.delete(aqueue.keys.item("a"))  # a legacy complete removed the data but not our lease
    assert await aqueue.release(a) is False
    assert await aqueue.release_many([b]) == [Outcome.DONE]
    assert queue_list(r, aqueue) == ["b"]
    assert processing_list(r, aqueue) == []


# --------------------------------------------------------------------------- counts and cleaning


async def test_counts(aqueue: AsyncWorkQueue) -> None:
    await aqueue.add_many([(f"i{n}", b"") for n in range(4)])
    await aqueue.lease(5000)
    assert await aqueue.counts() == Counts(3, 1)
    assert await aqueue.queue_len() == 3
    assert await aqueue.processing_len() == 1


async def test_light_clean(r: redis.Redis, aqueue: AsyncWorkQueue) -> None:
    await aqueue.add_many([(name, b"") for name in ("live", "legacy", "abandoned", "ghost", "live2")])
    await aqueue.lease_many(count=5, lease_ms=60_000)
    r.delete(aqueue.keys.lease("legacy"))
    r.set(aqueue.keys.legacy_lease("legacy"), "g1", px=60_000)
    r.delete(aqueue.keys.lease("abandoned"))
    r.delete(aqueue.keys.lease("ghost"), aqueue.keys.item("ghost"))
    assert await aqueue.light_clean(chunk=2) == CleanReport(("abandoned",), 1)
    assert processing_list(r, aqueue) == ["live2", "legacy", "live"]
    assert queue_list(r, aqueue) == ["abandoned"]


async def test_deep_clean(r: redis.Redis, aqueue: AsyncWorkQueue) -> None:
    await aqueue.add_many([("q", b""), ("p", b"")])
    await aqueue.lease(60_000)
    r.set(aqueue.keys.item("orphan"), b"")
    r.lpush(aqueue.keys.queue, "ghost1")
    r.lpush(aqueue.keys.processing, "ghost2")
    assert await aqueue.deep_clean(chunk=1) == CleanReport(("orphan",), 2)
    assert sorted(queue_list(r, aqueue)) == ["orphan", "p"]
    assert processing_list(r, aqueue) == ["q"]
    assert r.keys(f"{aqueue.prefix}:deep_clean:*") == []


async def test_legacy_lease_key(
    fr: redis.Redis, afr: aioredis.Redis, prefix: str, frozen_server: RedisServer
) -> None:
    q = AsyncWorkQueue(afr, prefix, legacy_lease_key=True)
    await q.add_many([("a", b""), ("b", b"")])
    held = await q.lease(4000)
    assert held is not None
    (many,) = await q.lease_many(count=5, lease_ms=6000)
    for lease, ms in ((held, 4000), (many, 6000)):
        assert fr.get(q.keys.legacy_lease(lease.id)) == lease.token.encode()
        assert fr.pttl(q.keys.legacy_lease(lease.id)) == fr.pttl(q.keys.lease(lease.id))
        assert ms - 2 <= fr.pttl(q.keys.lease(lease.id)) <= ms
    frozen_server.advance(1000)
    assert await q.renew(held, 9000) is True
    assert fr.pttl(q.keys.legacy_lease("a")) == fr.pttl(q.keys.lease("a"))
    assert 8998 <= fr.pttl(q.keys.lease("a")) <= 9000


# --------------------------------------------------------------------------- NOSCRIPT, errors


async def test_noscript_recovery(r: redis.Redis, aqueue: AsyncWorkQueue) -> None:
    await aqueue.counts()

    def flushed() -> int:
        r.script_flush()
        return eval_calls(r)

    mark = flushed()
    assert await aqueue.add_many([("a", b""), ("b", b""), ("c", b"")]) == [True] * 3
    assert eval_calls(r) == mark + 1
    flushed()
    held = await aqueue.lease(5000)
    assert held is not None
    flushed()
    assert await aqueue.renew(held, 5000) is True
    flushed()
    assert await aqueue.complete(held) is True
    flushed()
    other = await aqueue.lease(5000)
    assert other is not None
    flushed()
    assert await aqueue.release(other) is True
    flushed()
    assert await aqueue.counts() == Counts(2, 0)
    flushed()
    assert await aqueue.light_clean() == CleanReport((), 0)
    flushed()
    assert await aqueue.deep_clean() == CleanReport((), 0)
    mark = flushed()
    blocked = await aqueue.lease(5000, block=True, timeout_ms=1000)
    assert blocked is not None
    assert eval_calls(r) >= mark + 1


async def test_wrong_typed_key_is_wrong_type(r: redis.Redis, aqueue: AsyncWorkQueue) -> None:
    r.set(aqueue.keys.processing, "not a list")
    with pytest.raises(WrongType) as info:
        await aqueue.counts()
    assert info.value.code == "WRONG_TYPE"


async def test_non_rwq_error_is_redis_failure(r: redis.Redis, aqueue: AsyncWorkQueue) -> None:
    await aqueue.counts()  # the server checks are done: only add's script call remains
    r.config_set("maxmemory", "1")
    try:
        with pytest.raises(RedisFailure) as info:
            await aqueue.add("a", b"x")
    finally:
        r.config_set("maxmemory", "0")
    assert info.value.code == "REDIS_ERROR"
    assert "maxmemory" in str(info.value)


async def test_wrong_typed_policy_is_wrong_type(r: redis.Redis, aqueue: AsyncWorkQueue) -> None:
    r.set(aqueue.keys.policy, "not a hash")
    with pytest.raises(WrongType):
        await aqueue.retry_policy()


async def test_script_side_validation_maps_to_invalid_argument(
    r: redis.Redis, aqueue: AsyncWorkQueue
) -> None:
    await aqueue.add("a", b"")
    assert await aqueue.lease(5000) is not None
    before = snapshot(r)
    with pytest.raises(InvalidArgument):
        await aqueue.renew(Lease("a", b"", ""), 1000)
    assert snapshot(r) == before


async def test_eviction_policy_warning(r: redis.Redis, ar: aioredis.Redis, prefix: str) -> None:
    r.config_set("maxmemory-policy", "volatile-lru")
    try:
        q = AsyncWorkQueue(ar, prefix)
        with pytest.warns(RwqWarning, match="volatile-lru"):
            await q.counts()
    finally:
        r.config_set("maxmemory-policy", "noeviction")


def no_retry(server: RedisServer, **kwargs: Any) -> aioredis.Redis:
    return aioredis.Redis(host="127.0.0.1", port=server.port, retry=AsyncRetry(NoBackoff(), 0), **kwargs)


async def blocked_client_id(r: redis.Redis) -> int:
    for _ in range(500):
        for entry in r.client_list():
            if entry.get("cmd") == "blmove":
                return int(entry["id"])
        await asyncio.sleep(0.01)
    raise AssertionError("no client blocked in BLMOVE")


async def test_connection_killed_during_blmove(
    r: redis.Redis, redis_server: RedisServer, prefix: str
) -> None:
    client = no_retry(redis_server)
    q = AsyncWorkQueue(client, prefix)
    await q.counts()
    task = asyncio.create_task(q.lease(1000, block=True, timeout_ms=20_000))
    r.client_kill_filter(_id=str(await blocked_client_id(r)))
    with pytest.raises(RedisFailure) as info:
        await asyncio.wait_for(task, 10)
    await client.aclose()
    assert info.value.code == "REDIS_ERROR"
    assert isinstance(info.value.__cause__, redis.ConnectionError)


class KillAfter(aioredis.Redis):
    """An asyncio client whose connection fails while the ``n``-th script's reply is on its way."""

    def __init__(self, server: RedisServer, n: int) -> None:
        super().__init__(host="127.0.0.1", port=server.port, retry=AsyncRetry(NoBackoff(), 0))
        left = [n]

        class Lossy(AsyncConnection):
            script = False

            async def send_command(self, *args: Any, **kwargs: Any) -> None:
                self.script = str(args[0]).upper() in ("EVALSHA", "EVAL")
                await super().send_command(*args, **kwargs)

            async def read_response(self, *args: Any, **kwargs: Any) -> Any:
                reply = await super().read_response(*args, **kwargs)
                if self.script:
                    left[0] -= 1
                    if left[0] == 0:
                        await self.disconnect()
                        raise redis.ConnectionError("connection lost before the reply arrived")
                return reply

        self.connection_pool.connection_class = Lossy


async def test_connection_killed_between_plan_steps(
    r: redis.Redis, redis_server: RedisServer, prefix: str
) -> None:
    items = [(f"i{n}", b"") for n in range(1500)]
    client = KillAfter(redis_server, 1)
    with pytest.raises(RedisFailure):
        await AsyncWorkQueue(client, prefix).add_many(items)
    await client.aclose()
    assert r.llen(f"{prefix}:queue") == 1000
    healthy = aioredis.Redis(host="127.0.0.1", port=redis_server.port)
    assert await AsyncWorkQueue(healthy, prefix).add_many(items) == [False] * 1000 + [True] * 500
    await healthy.aclose()


async def test_stopped_server(prefix: str) -> None:
    server = RedisServer().start()
    client = no_retry(server, socket_connect_timeout=2)
    q = AsyncWorkQueue(client, prefix)
    try:
        assert await q.add("a", b"") is True
        server.stop()
        with pytest.raises(RedisFailure) as info:
            await q.lease(1000)
        assert info.value.code == "REDIS_ERROR"
        with pytest.raises(RedisFailure):
            await q.counts()
    finally:
        await client.aclose()
        server.stop()
