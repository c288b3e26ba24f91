"""Regressions found in review, each pinned by the smallest reproduction."""

import pytest
import redis

from rwq import FailOutcome, InvalidArgument, RetryPolicy, WorkQueue
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
