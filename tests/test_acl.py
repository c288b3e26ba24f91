"""The least-privilege ACL user of SPEC §13 can run every operation, and nothing more is needed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from rwq import RetryPolicy, WorkQueue
from rwq.conformance.redis_server import RedisServer

SPEC = Path(__file__).resolve().parents[1] / "SPEC.md"


def spec_acl_rules() -> list[str]:
    """The ``ACL SETUSER`` example from SPEC.md, as rules (user name and password excluded)."""
    block = re.search(r"```\nACL SETUSER worker (.*?)```", SPEC.read_text(), re.S)
    assert block is not None, "SPEC §13 lost its ACL example"
    return [rule for rule in block.group(1).split() if rule not in ("on", ">secret")]


@pytest.fixture
def worker_client(r: redis.Redis, redis_server: RedisServer) -> Iterator[redis.Redis]:
    rules = spec_acl_rules()
    r.acl_setuser(
        "worker",
        enabled=True,
        reset=True,
        passwords=["+secret"],
        keys=[rule[1:] for rule in rules if rule.startswith("~")],
        commands=[rule for rule in rules if rule.startswith("+")],
    )
    client = redis.Redis(host="127.0.0.1", port=redis_server.port, username="worker", password="secret")
    yield client
    client.close()
    r.acl_deluser("worker")


def test_every_operation_runs_as_the_spec_acl_user(worker_client: redis.Redis, r: redis.Redis) -> None:
    r.script_flush()  # the EVAL fallback path runs as the user too
    queue = WorkQueue(worker_client, "jobs")
    queue.set_retry_policy(RetryPolicy(max_attempts=1, backoff="fixed", base_ms=0))
    assert queue.retry_policy() is not None
    assert queue.add_many([("a", b"A"), ("b", b"B"), ("c", b"C")]) == [True, True, True]
    assert queue.add("d", b"D", delay_ms=1)
    first = queue.lease(10_000)
    assert first is not None
    assert queue.renew(first, 10_000)
    assert queue.complete(first, require_lease=True)
    second = queue.lease(10_000, block=True, timeout_ms=100)
    assert second is not None
    assert queue.release(second, delay_ms=5)
    third = queue.lease(10_000)
    assert third is not None
    assert queue.fail(third, "boom").outcome.name == "DEAD"
    assert [item.id for item in queue.dead_items()] == [third.id]
    assert queue.dead_item(third.id) is not None
    assert queue.requeue_dead([third.id]) == [True]
    assert queue.purge_dead(["nope"]) == [False]
    queue.light_clean()
    queue.deep_clean()
    assert queue.counts().queued >= 1


def test_the_acl_user_cannot_touch_keys_outside_its_prefix(worker_client: redis.Redis) -> None:
    with pytest.raises(redis.exceptions.NoPermissionError):
        worker_client.set("other:key", b"x")
