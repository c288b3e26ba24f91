"""The periodic scripts (SPEC §23) by raw EVAL on a frozen-clock server: lua/schedule.lua and
lua/fire.lua, every refusal writing nothing."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from rwq.conformance.redis_server import RedisServer
from rwq.protocol.scripts import registry


def keyspace(r: redis.Redis) -> dict[bytes, tuple[bytes | None, int]]:
    """Every key, its serialized value and its TTL in seconds."""
    return {key: (r.dump(key), round(r.pttl(key) / 1000)) for key in sorted(r.keys("*"))}  # type: ignore[misc]


EVERY = b'{"v":1,"every_ms":60000,"offset_ms":0,"missed":"skip","grace_ms":60000}'
DIGEST = hashlib.sha1(EVERY).hexdigest()


@pytest.fixture
def fr(frozen_server: RedisServer) -> Iterator[redis.Redis]:
    client = frozen_server.client()
    client.flushall()
    yield client
    client.close()


P = b"p:{s}:"
Q = P + b"queue"


def call(r: redis.Redis, name: str, *argv: bytes | str | int, keys: tuple[bytes, ...] = (Q,)) -> Any:
    client: Any = r
    return client.eval(registry()[name].source, len(keys), *keys, *argv)


def now_ms(r: redis.Redis) -> int:
    seconds, micros = r.time()
    return int(seconds) * 1000 + int(micros) // 1000


def slot_after(r: redis.Redis, every: int = 60_000) -> int:
    """The first grid slot after the server's now."""
    return (now_ms(r) // every + 1) * every


def put(r: redis.Redis, name: bytes = b"s", definition: bytes = EVERY, data: bytes = b"payload") -> Any:
    return call(r, "schedule", b"put", name, definition, data)


def test_put_creates_then_replaces_keeping_the_watermark(fr: redis.Redis, frozen_server: RedisServer) -> None:
    """RWQ-SCHED-001, -013: create sets the watermark to now; replace keeps it."""
    now = now_ms(fr)
    assert put(fr) == [1, now]
    assert fr.hget(P + b"schedules", b"s") == EVERY
    assert fr.hget(P + b"schedules:data", b"s") == b"payload"
    assert fr.hget(P + b"schedules:fired", b"s") == str(now).encode()
    frozen_server.advance(5000)
    assert put(fr, definition=b'{"v":1,"every_ms":1000}', data=b"other") == [0, now + 5000]
    assert fr.hget(P + b"schedules:fired", b"s") == str(now).encode()
    assert fr.hget(P + b"schedules:data", b"s") == b"other"


def test_list_pages_every_schedule_with_its_state(fr: redis.Redis) -> None:
    put(fr, b"a")
    put(fr, b"b", data=b"")
    assert call(fr, "schedule", b"pause", b"b") == 1
    now = now_ms(fr)
    reply = call(fr, "schedule", b"list", b"0", b"1000")
    assert reply[:2] == [now, b"0"]
    rows = sorted(reply[2])
    mark = str(now).encode()
    assert rows == [[b"a", EVERY, b"payload", mark, b""], [b"b", EVERY, b"", mark, mark]]


def test_fire_at_the_slot_not_before_and_once(fr: redis.Redis, frozen_server: RedisServer) -> None:
    """RWQ-SCHED-002, -008: early before the slot; one item n@slot at it; old after it, even
    once the item is gone (the watermark, not the id)."""
    put(fr)
    slot = slot_after(fr)
    frozen_server.advance(slot - 1 - now_ms(fr))
    mark = fr.hget(P + b"schedules:fired", b"s")
    assert call(fr, "fire", b"s", DIGEST, slot) == [slot - 1, b"ok", mark, [b"early"]]
    frozen_server.advance(1)
    assert call(fr, "fire", b"s", DIGEST, slot) == [slot, b"ok", str(slot).encode(), [1]]
    item = f"s@{slot}".encode()
    assert fr.lrange(Q, 0, -1) == [item]
    assert fr.get(P + b"item:" + item) == b"payload"
    fr.delete(P + b"item:" + item, Q)
    assert call(fr, "fire", b"s", DIGEST, slot) == [slot, b"ok", str(slot).encode(), [b"old"]]
    assert fr.exists(Q, P + b"item:" + item) == 0


def test_fire_two_due_slots_in_order_and_early_stops_the_rest(
    fr: redis.Redis, frozen_server: RedisServer
) -> None:
    put(fr)
    first = slot_after(fr)
    frozen_server.advance(first + 60_000 - now_ms(fr))
    reply = call(fr, "fire", b"s", DIGEST, first, first + 60_000, first + 120_000)
    assert reply[1:] == [b"ok", str(first + 60_000).encode(), [1, 1, b"early"]]
    assert fr.lrange(Q, 0, -1) == [f"s@{first + 60_000}".encode(), f"s@{first}".encode()]


def test_refusals_write_nothing(fr: redis.Redis, frozen_server: RedisServer) -> None:
    """RWQ-SCHED-003, -009: gone, stale, paused, an off-grid slot."""
    slot = slot_after(fr)
    assert call(fr, "fire", b"s", DIGEST, slot)[1:] == [b"gone", b"", []]
    put(fr)
    frozen_server.advance(slot - now_ms(fr))
    before = keyspace(fr)
    assert call(fr, "fire", b"s", hashlib.sha1(b"older").hexdigest(), slot)[1] == b"stale"
    with pytest.raises(redis.ResponseError, match=r"RWQ_INVALID_ARGUMENT .*grid"):
        call(fr, "fire", b"s", DIGEST, slot - 1)
    assert call(fr, "schedule", b"pause", b"s") == 1
    assert call(fr, "schedule", b"pause", b"s") == 0
    paused = keyspace(fr)
    assert call(fr, "fire", b"s", DIGEST, slot)[1] == b"paused"
    assert keyspace(fr) == paused
    fr.hdel(P + b"schedules:paused", b"s")
    assert keyspace(fr) == before


def test_late_slots_under_skip_and_once(fr: redis.Redis, frozen_server: RedisServer) -> None:
    """RWQ-SCHED-010: skip refuses a slot more than grace_ms late; once fires it."""
    once = b'{"v":1,"every_ms":60000,"missed":"once","grace_ms":0}'
    put(fr)
    put(fr, b"o", once)
    slot = slot_after(fr)
    frozen_server.advance(slot + 60_001 - now_ms(fr))
    assert call(fr, "fire", b"s", DIGEST, slot)[3] == [b"late"]
    assert fr.hget(P + b"schedules:fired", b"s") != str(slot).encode()
    assert call(fr, "fire", b"o", hashlib.sha1(once).hexdigest(), slot)[3] == [1]


def test_an_existing_id_moves_the_watermark_and_adds_nothing(
    fr: redis.Redis, frozen_server: RedisServer
) -> None:
    """RWQ-SCHED-008: a live, delayed or dead item with the slot's id: outcome 0, watermark moved."""
    wide = b'{"v":1,"every_ms":60000,"grace_ms":600000}'
    put(fr, definition=wide)
    first = slot_after(fr)
    frozen_server.advance(first + 120_000 - now_ms(fr))
    fr.set(P + f"item:s@{first}".encode(), b"mine")
    fr.zadd(P + b"delayed", {f"s@{first + 60_000}": 1})
    fr.zadd(P + b"dead", {f"s@{first + 120_000}": 1})
    reply = call(fr, "fire", b"s", hashlib.sha1(wide).hexdigest(), first, first + 60_000, first + 120_000)
    assert reply[2:] == [str(first + 120_000).encode(), [0, 0, 0]]
    assert fr.get(P + f"item:s@{first}".encode()) == b"mine"
    assert fr.exists(Q) == 0


def test_a_wrong_type_refuses_before_the_watermark_moves(fr: redis.Redis, frozen_server: RedisServer) -> None:
    put(fr)
    slot = slot_after(fr)
    frozen_server.advance(slot - now_ms(fr))
    for key in (Q, P + b"dead", P + f"item:s@{slot}".encode()):
        fr.hset(key, b"x", b"y")
        before = keyspace(fr)
        with pytest.raises(redis.ResponseError, match="RWQ_WRONG_TYPE"):
            call(fr, "fire", b"s", DIGEST, slot)
        assert keyspace(fr) == before
        fr.delete(key)
    fr.set(P + b"schedules:paused", b"x")
    before = keyspace(fr)
    for argv in ((b"put", b"t", EVERY, b""), (b"list", b"0", b"10"), (b"remove", b"s")):
        with pytest.raises(redis.ResponseError, match="RWQ_WRONG_TYPE"):
            call(fr, "schedule", *argv)
    with pytest.raises(redis.ResponseError, match="RWQ_WRONG_TYPE"):
        call(fr, "fire", b"s", DIGEST, slot)
    assert keyspace(fr) == before


def test_resume_moves_the_watermark_to_now(fr: redis.Redis, frozen_server: RedisServer) -> None:
    """RWQ-SCHED-014: no slot of the pause fires."""
    put(fr)
    start = now_ms(fr)
    assert call(fr, "schedule", b"pause", b"s") == 1
    frozen_server.advance(180_000)
    assert call(fr, "schedule", b"resume", b"s") == 1
    assert call(fr, "schedule", b"resume", b"s") == 0
    assert fr.hget(P + b"schedules:fired", b"s") == str(start + 180_000).encode()
    assert fr.hexists(P + b"schedules:paused", b"s") == 0


def test_remove_deletes_the_schedule_and_keeps_its_items(fr: redis.Redis, frozen_server: RedisServer) -> None:
    """RWQ-SCHED-015."""
    put(fr)
    slot = slot_after(fr)
    frozen_server.advance(slot - now_ms(fr))
    call(fr, "fire", b"s", DIGEST, slot)
    call(fr, "schedule", b"pause", b"s")
    assert call(fr, "schedule", b"remove", b"s") == 1
    assert call(fr, "schedule", b"remove", b"s") == 0
    assert sorted(fr.keys()) == [P + f"item:s@{slot}".encode(), Q]


def test_declared_fire_names_every_slot_id(fr: redis.Redis, frozen_server: RedisServer) -> None:
    """Profile declared-keys: the DECLARED keys, then a triple per slot id."""
    put(fr)
    slot = slot_after(fr)
    frozen_server.advance(slot - now_ms(fr))
    names = (
        b"schedules",
        b"schedules:data",
        b"schedules:fired",
        b"schedules:paused",
        b"dead",
        b"delayed",
        b"stats",
        b"stats:series",
    )
    declared = (Q, *(P + n for n in names))
    item = f"s@{slot}".encode()
    with pytest.raises(redis.ResponseError, match=r"RWQ_INVALID_ARGUMENT .*declared"):
        call(fr, "fire", b"s", DIGEST, slot, keys=declared)
    triple = (P + b"item:" + item, P + b"lease:" + item, P + b"leased_by_session:" + item)
    assert call(fr, "fire", b"s", DIGEST, slot, keys=(*declared, *triple))[3] == [1]
