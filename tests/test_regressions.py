"""Regressions found in review, each pinned by the smallest reproduction."""

from typing import Any

import pytest
import redis
from redis.connection import Connection

from rwq import Counts, FailOutcome, InvalidArgument, RedisFailure, RetryPolicy, WorkQueue
from rwq.conformance.redis_server import RedisServer


def test_light_clean_continues_after_a_fully_removed_first_chunk(queue: WorkQueue, r: redis.Redis) -> None:
    """A chunk whose entries were all requeued left cursor 0, which once read as 'done'."""
    queue.add_many([("a", b"A"), ("b", b"B"), ("c", b"C")])
    for _ in range(3):  # moved without a lease: abandoned
        r.lmove(queue.keys.queue.decode(), queue.keys.processing.decode(), "RIGHT", "LEFT")
    report = queue.light_clean(chunk=1)
    assert report.requeued == ("a", "b", "c")
    assert queue.counts().queued == 3


def test_invalid_first_call_sends_nothing(redis_server: RedisServer) -> None:
    """The first call of a new queue validated its arguments only after INFO / CONFIG GET."""
    client = redis_server.client()
    before = int(client.info("stats")["total_commands_processed"])
    with pytest.raises(InvalidArgument):
        WorkQueue(client, "fresh").lease(0)
    after = int(client.info("stats")["total_commands_processed"])
    assert after - before == 1  # only the second INFO itself


def test_a_policy_field_from_a_later_version_is_ignored(queue: WorkQueue, r: redis.Redis) -> None:
    queue.set_retry_policy(RetryPolicy(max_attempts=2))
    r.hset(queue.keys.policy.decode(), "priority_lanes", "3")
    assert queue.retry_policy() == RetryPolicy(max_attempts=2)


def test_policy_numbers_are_read_as_the_scripts_read_them(queue: WorkQueue, r: redis.Redis) -> None:
    """str.isdigit() took Unicode digits: ARABIC-INDIC 3 read as 3 and a superscript 2 raised ValueError."""
    queue.set_retry_policy(RetryPolicy(max_attempts=2))
    r.hset(
        queue.keys.policy.decode(),
        mapping={"max_attempts": "\u0663", "base_ms": "\u00b2", "cap_ms": "2" + "0" * 15},
    )
    assert queue.retry_policy() == RetryPolicy(max_attempts=0, base_ms=0, cap_ms=0)


def test_exponential_backoff_stays_finite_after_many_attempts(queue: WorkQueue, r: redis.Redis) -> None:
    """base 0 * 2^1024 was NaN: ZADD failed after the item had been moved out of its keys."""
    queue.set_retry_policy(RetryPolicy(max_attempts=0, backoff="exponential", base_ms=0, cap_ms=0))
    queue.add("x", b"X")
    held = queue.lease(10_000)
    assert held is not None
    r.hset(queue.keys.prefix + ":attempts", "x", 2000)
    result = queue.fail(held)
    assert (result.outcome, result.delay_ms) == (FailOutcome.RETRY, 0)
    assert queue.counts().queued == 1


class LossyConnection(Connection):
    """Drops the connection right after reading one reply: the server has run the command."""

    drop_next_reply = False

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        reply = super().read_response(*args, **kwargs)
        if LossyConnection.drop_next_reply:
            LossyConnection.drop_next_reply = False
            self.disconnect()  # type: ignore[no-untyped-call]
            raise redis.ConnectionError("connection lost before the reply arrived")
        return reply


def test_a_lost_script_reply_is_a_redis_failure_not_a_rerun_answer(redis_server: RedisServer) -> None:
    """redis-py's default retries re-ran complete and reported the re-run's False (RWQ-FAIL-001)."""
    client = redis.Redis(host="127.0.0.1", port=redis_server.port)  # default retry policy
    client.connection_pool.connection_class = LossyConnection
    queue = WorkQueue(client, "lossy:{q}")
    queue.add_many([("a", b"A"), ("b", b"B")])
    LossyConnection.drop_next_reply = True
    with pytest.raises(RedisFailure):
        queue.complete("a")
    assert not client.exists("lossy:{q}:item:a")  # it did run, once
    held = queue.lease(30_000)
    assert held is not None
    LossyConnection.drop_next_reply = True
    with pytest.raises(RedisFailure):
        queue.release(held)
    assert queue.counts().queued == 1  # released once, and nothing else leased meanwhile
    client.close()


def test_a_corrupt_attempt_count_loses_nothing(queue: WorkQueue, r: redis.Redis) -> None:
    """HINCRBY on a non-integer field errored after LMOVE and earlier grants in the same call."""
    queue.set_retry_policy(RetryPolicy(max_attempts=3))
    queue.add_many([("a", b"A"), ("b", b"B")])
    r.hset(queue.keys.prefix + ":attempts", "b", "bogus")
    leases = queue.lease_many(count=2, lease_ms=60_000)
    assert [(held.id, held.attempt) for held in leases] == [("a", 1), ("b", 1)]


def test_light_clean_reads_a_corrupt_count_before_it_writes(
    fr: redis.Redis, frozen_server: RedisServer, prefix: str
) -> None:
    """A non-integer attempt count made light_clean fail after removing the processing entry."""
    queue = WorkQueue(fr, prefix)
    queue.set_retry_policy(RetryPolicy(max_attempts=3))
    queue.add("x", b"X")
    assert queue.lease(100) is not None
    fr.hset(queue.keys.prefix + ":attempts", "x", "bogus")
    frozen_server.advance(101)
    assert queue.light_clean().requeued == ("x",)
    assert queue.counts() == Counts(1, 0)


def test_a_corrupt_policy_value_cannot_lose_a_failed_item(queue: WorkQueue, r: redis.Redis) -> None:
    """jitter_pct 'nan' made ZADD fail in fail.lua after the item key was deleted."""
    queue.set_retry_policy(RetryPolicy(max_attempts=0, backoff="fixed", base_ms=1000, jitter_pct=10))
    r.hset(queue.keys.policy.decode(), "jitter_pct", "nan")
    queue.add("x", b"X")
    held = queue.lease(60_000)
    assert held is not None
    result = queue.fail(held)
    assert (result.outcome, result.delay_ms) == (FailOutcome.RETRY, 1000)
    assert queue.counts().delayed == 1
    assert queue.retry_policy() == RetryPolicy(max_attempts=0, backoff="fixed", base_ms=1000, jitter_pct=0)


def test_dead_info_written_by_another_client_is_read_leniently(queue: WorkQueue, r: redis.Redis) -> None:
    base = queue.keys.prefix
    r.zadd(base + ":dead", {"x": 5})
    r.hset(base + ":dead:info", "x", b"\xff not json")
    r.hset(base + ":dead:data", "x", b"X")
    [item] = queue.dead_items()
    assert (item.id, item.reason, item.attempts) == ("x", "", 0)


def test_a_single_string_is_not_a_batch(queue: WorkQueue) -> None:
    with pytest.raises(InvalidArgument):
        queue.complete_many("abc")
    with pytest.raises(InvalidArgument):
        queue.requeue_dead("abc")
