"""Profile stats (SPEC §22): the counting scripts and the ``stats`` script on a real Redis, the
clients' methods (sync, async, sharded) and ``rwq stats``. The exact counts per path, the trim and
the expiry are the suite's (conformance/cases/stats.json); these check the client side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis
import redis.asyncio as aioredis
from click.testing import CliRunner
from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]

from rwq import AsyncWorkQueue, QueueStats, RetryPolicy, StatCounts, WorkQueue
from rwq.cli import cli
from rwq.conformance.redis_server import RedisServer
from rwq.errors import WrongType
from rwq.protocol.operations import Lease
from rwq.protocol.stats import MINUTES, summed
from rwq.sharded import AsyncShardedWorkQueue, ShardedWorkQueue

ROOT = Path(__file__).resolve().parents[1]
MINUTE = 60_000


def stats_keys(r: redis.Redis) -> list[bytes]:
    return sorted(key for key in r.keys("*") if isinstance(key, bytes) and b":stats" in key)


def leased(queue: WorkQueue) -> Lease:
    held = queue.lease(30_000)
    assert held is not None
    return held


def test_off_by_default_and_every_operation_leaves_no_stats_key(queue: WorkQueue, r: redis.Redis) -> None:
    """RWQ-STATS-002: a queue whose stats were never turned on gets no stats key from any path."""
    queue.set_retry_policy(RetryPolicy(max_attempts=1))
    queue.add_many([("a", b"A"), ("b", b"B")])
    held = queue.lease(60_000)
    assert held is not None
    queue.fail(held, "boom")  # dead-lettered
    queue.complete(leased(queue))
    stats = queue.stats()
    assert (stats.enabled, stats.since_ms, stats.current) == (False, None, StatCounts())
    assert stats_keys(r) == []


def test_counts_windows_and_rates_on_the_server_clock(fr: redis.Redis, frozen_server: RedisServer) -> None:
    """RWQ-STATS-001/003/006: since is the server's now; events land in the minute of the call;
    the windows are the complete minutes before the current one."""
    queue = WorkQueue(fr, "st")
    assert queue.enable_stats() is True
    assert queue.enable_stats() is False  # on already: since kept
    since = queue.stats().since_ms
    assert since is not None
    assert since == int(fr.get("st:stats") or 0)
    queue.add_many([("a", b"A"), ("b", b"B"), ("a", b"again")])  # a repeated id counts once
    frozen_server.advance(MINUTE)
    queue.complete(leased(queue))
    frozen_server.advance(5 * MINUTE)
    queue.add("c", b"C")
    stats = queue.stats()
    assert stats.enabled
    assert stats.since_ms == since
    assert stats.minute == stats.now_ms // MINUTE
    assert len(stats.series) == MINUTES
    assert stats.current == StatCounts(added=1)
    assert stats.windows[1] == StatCounts()
    assert stats.windows[5] == StatCounts(completed=1)
    assert stats.windows[15] == stats.windows[60] == StatCounts(added=2, completed=1)
    assert stats.rate("added", 15) == 2 / (15 * 60)
    with pytest.raises(ValueError, match="counter"):
        stats.rate("leased")
    with pytest.raises(ValueError, match="minutes"):
        stats.rate("added", 2)
    assert queue.disable_stats() is True
    assert queue.disable_stats() is False
    assert stats_keys(fr) == []


def test_a_broken_series_never_fails_an_operation_and_the_read_says_so(
    queue: WorkQueue, r: redis.Redis
) -> None:
    """RWQ-STATS-005: the counts are pcall'd after the operation's writes."""
    queue.enable_stats()
    r.set(f"{queue.prefix}:stats:series", "not a hash")
    queue.add("a", b"A")
    assert queue.complete(leased(queue)) is True
    with pytest.raises(WrongType):
        queue.stats()
    assert queue.disable_stats() is True  # the admin's repair: deletes both whatever they hold
    assert stats_keys(r) == []


async def test_the_async_clients(aqueue: AsyncWorkQueue, ar: aioredis.Redis) -> None:
    assert await aqueue.enable_stats() is True
    await aqueue.add_many([("a", b"A"), ("b", b"B")])
    stats = await aqueue.stats()
    assert stats.enabled
    assert stats.current == StatCounts(added=2)
    assert await aqueue.disable_stats() is True
    assert (await aqueue.stats()).enabled is False
    sharded = AsyncShardedWorkQueue(ar, "asq", shards=2)
    assert await sharded.enable_stats() is True
    await sharded.add_many([(f"i{n}", b"x") for n in range(6)])
    assert (await sharded.stats()).current == StatCounts(added=6)
    assert await sharded.disable_stats() is True
    assert (await sharded.stats()).enabled is False


def test_a_sharded_queue_turns_every_shard_and_sums_them(r: redis.Redis) -> None:
    """RWQ-STATS-007: enable and disable reach every shard; stats sums them."""
    sharded = ShardedWorkQueue(r, "sq", shards=3)
    assert sharded.enable_stats() is True
    assert all(r.exists(f"{{sq#{i}}}:stats") for i in range(3))
    sharded.add_many([(f"i{n}", b"x") for n in range(12)])
    assert {i: r.exists(f"{{sq#{i}}}:stats:series") for i in range(3)} == {0: 1, 1: 1, 2: 1}
    stats = sharded.stats()
    assert stats.enabled
    assert stats.current == StatCounts(added=12)
    r.delete("{sq#2}:stats")  # a disable cut short: not on for the whole queue
    assert sharded.stats().enabled is False
    assert sharded.enable_stats() is True
    assert sharded.disable_stats() is True
    assert stats_keys(r) == []


def test_shards_read_across_a_minute_boundary_are_aligned() -> None:
    """A shard read in the minute before the latest one is summed one minute older."""
    one = tuple(StatCounts(added=i + 1) for i in range(MINUTES))
    late = QueueStats(True, 5, 61 * MINUTE, 61, one)
    early = QueueStats(True, 7, 61 * MINUTE - 1, 60, one)
    total = summed([early, late])
    assert total.minute == 61
    assert total.since_ms == 7
    assert total.series[-1] == StatCounts(added=61)  # the early shard has nothing in minute 61
    assert total.series[-2] == StatCounts(added=60 + 61)
    assert total.series[0] == StatCounts(added=1 + 2)  # the early shard's oldest minute is dropped


def test_rwq_stats_enables_reads_and_disables(queue: WorkQueue, redis_server: RedisServer) -> None:
    schema = Draft202012Validator(json.loads((ROOT / "schemas" / "cli-output.schema.json").read_text()))
    base = ["--url", redis_server.url, "--prefix", queue.prefix]

    def rwq(*args: str) -> dict[str, object]:
        result = CliRunner().invoke(cli, ["stats", *base, *args, "--json"])
        assert result.exit_code == 0, result.output
        document: dict[str, object] = json.loads(result.output)
        schema.validate(document)
        return document

    assert rwq()["stats"] is None
    assert rwq("--enable") == {"command": "stats enable", "prefix": queue.prefix, "changed": True}
    queue.add("a", b"A")
    document = rwq()
    events = document["stats"]
    assert isinstance(events, dict)
    assert events["current"]["added"] == 1
    table = CliRunner().invoke(cli, ["stats", *base])
    assert table.exit_code == 0
    assert "added" in table.output
    assert "per second" in table.output
    assert rwq("--disable")["changed"] is True
    assert rwq("--disable")["changed"] is False
