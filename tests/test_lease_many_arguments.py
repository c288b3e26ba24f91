"""Issue #21: ``lease_many`` takes ``count`` and ``lease_ms`` by keyword. By position (the reverse of
``lease(lease_ms)``'s order) a swapped pair such as ``(500, 10)`` passed every check; it still works,
with a DeprecationWarning, and a malformed call is refused before any I/O. Sync, asyncio and
sharded queues alike."""

from __future__ import annotations

from typing import Any

import pytest
import redis
import redis.asyncio as aioredis

from rwq import AsyncWorkQueue, WorkQueue
from rwq.errors import InvalidType
from rwq.sharded import AsyncShardedWorkQueue, ShardedWorkQueue

MALFORMED: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((10,), {}),  # lease_ms missing
    ((10, 500, 1), {}),
    ((10, 500), {"count": 3}),
    ((10,), {"lease_ms": 500}),
    ((), {"count": 3}),
    ((), {"lease_ms": 500}),
]


def snapshot(r: redis.Redis) -> dict[bytes, Any]:
    return {key: r.dump(key) for key in r.scan_iter()}


@pytest.mark.parametrize("sharded", [False, True])
def test_sync_lease_many_by_keyword(r: redis.Redis, prefix: str, sharded: bool) -> None:
    queue = ShardedWorkQueue(r, "sh", shards=2) if sharded else WorkQueue(r, prefix)
    queue.add_many([(f"i{n}", b"x") for n in range(6)])
    before = snapshot(r)
    for args, kwargs in MALFORMED:
        with pytest.raises(InvalidType, match="lease_many"):
            queue.lease_many(*args, **kwargs)
    assert snapshot(r) == before
    assert len(queue.lease_many(count=2, lease_ms=30_000)) == 2
    with pytest.deprecated_call(match="by position is deprecated"):
        held = queue.lease_many(2, 30_000)
    assert len(held) == 2


@pytest.mark.parametrize("sharded", [False, True])
async def test_async_lease_many_by_keyword(
    r: redis.Redis, ar: aioredis.Redis, prefix: str, sharded: bool
) -> None:
    queue = AsyncShardedWorkQueue(ar, "sh", shards=2) if sharded else AsyncWorkQueue(ar, prefix)
    await queue.add_many([(f"i{n}", b"x") for n in range(6)])
    before = snapshot(r)
    for args, kwargs in MALFORMED:
        with pytest.raises(InvalidType, match="lease_many"):
            await queue.lease_many(*args, **kwargs)
    assert snapshot(r) == before
    assert len(await queue.lease_many(count=2, lease_ms=30_000)) == 2
    with pytest.deprecated_call(match="by position is deprecated"):
        assert len(await queue.lease_many(2, 30_000)) == 2
