"""Profile ack (SPEC 17) against a real primary and replica: an add acknowledged with
``wait_replicas`` survives the primary's SIGKILL and the replica's promotion; one without it,
made while the replica lags, does not; and a WAIT that times out is NOT_REPLICATED.

The replica is made to lag by stopping its process (SIGSTOP), so that nothing reaches it until
SIGCONT: a real replication delay, not a simulated one.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest
import redis
import redis.asyncio as aioredis

from rwq import AsyncWorkQueue, WorkQueue
from rwq.conformance.redis_server import RedisServer
from rwq.errors import InvalidArgument, NotReplicated

LINK_UP_S = 10.0


def _wait_streaming(primary: RedisServer) -> None:
    """Until the primary streams writes to its replica: a write and its WAIT acknowledged."""
    client = primary.client()
    deadline = time.monotonic() + LINK_UP_S
    while time.monotonic() < deadline:
        client.set("warm-up", 1)
        if client.wait(1, 100) == 1:
            client.delete("warm-up")
            assert client.wait(1, 5000) == 1
            return
    raise AssertionError("the replica did not catch up with its primary")


def _wait_replicated(replica: RedisServer, key: str) -> None:
    deadline = time.monotonic() + LINK_UP_S
    while not replica.client().exists(key):
        assert time.monotonic() < deadline, f"{key} never reached the replica"
        time.sleep(0.01)


@pytest.fixture
def pair() -> Iterator[tuple[RedisServer, RedisServer]]:
    primary = RedisServer(extra_args=("--repl-diskless-sync-delay", "0")).start()
    replica = RedisServer(extra_args=("--replicaof", "127.0.0.1", str(primary.port))).start()
    try:
        _wait_streaming(primary)
        yield primary, replica
    finally:
        if _running_pid(replica):
            os.kill(_running_pid(replica), signal.SIGCONT)
        replica.stop()
        primary.stop()


def _running_pid(server: RedisServer) -> int:
    """The server's process id while it runs, else 0."""
    process = server._process
    return process.pid if process is not None and process.poll() is None else 0


def _fail_over(primary: RedisServer, replica: RedisServer) -> redis.Redis:
    """SIGKILL the primary, let the replica run again and promote it."""
    os.kill(_running_pid(primary), signal.SIGKILL)
    os.kill(_running_pid(replica), signal.SIGCONT)
    promoted = replica.client()
    promoted.replicaof("NO", "ONE")
    return promoted


def test_acknowledged_adds_survive_a_failover(pair: tuple[RedisServer, RedisServer]) -> None:
    primary, replica = pair
    queue = WorkQueue(primary.client(), "jobs", wait_replicas=1, wait_timeout_ms=5000)
    acked = [f"a{i}" for i in range(50) if queue.add(f"a{i}", b"x")]
    # The replica stops; an add now waits for it, and is acknowledged only once it resumes.
    os.kill(_running_pid(replica), signal.SIGSTOP)
    done: dict[str, object] = {}
    adder = threading.Thread(target=lambda: done.update(result=queue.add("late", b"x")))
    adder.start()
    time.sleep(0.3)
    assert not done, "the add returned before its replica had it"
    os.kill(_running_pid(replica), signal.SIGCONT)
    adder.join(10)
    assert done == {"result": True}
    acked.append("late")
    promoted = _fail_over(primary, replica)
    assert all(promoted.exists(f"jobs:item:{item_id}") for item_id in acked)
    assert len(acked) == 51


def test_unacknowledged_add_can_be_lost_in_a_failover(pair: tuple[RedisServer, RedisServer]) -> None:
    """The control: the same failover loses an add made without wait_replicas while the replica
    is cut off, so the test above shows what WAIT buys. The replica is stopped first so that it
    cannot reconnect, then the primary drops its link (a stopped process still receives into its
    socket buffer, so stopping alone would not lose the write)."""
    primary, replica = pair
    queue = WorkQueue(primary.client(), "jobs")
    queue.add("before", b"x")
    _wait_replicated(replica, "jobs:item:before")
    os.kill(_running_pid(replica), signal.SIGSTOP)
    primary.client().client_kill_filter(_type="replica")
    assert queue.add("lost", b"x") is True  # acknowledged by the primary alone
    promoted = _fail_over(primary, replica)
    assert promoted.exists("jobs:item:before") == 1
    assert promoted.exists("jobs:item:lost") == 0


def test_a_wait_that_times_out_is_not_replicated(pair: tuple[RedisServer, RedisServer]) -> None:
    primary, replica = pair
    queue = WorkQueue(primary.client(), "jobs", wait_replicas=1, wait_timeout_ms=200)
    os.kill(_running_pid(replica), signal.SIGSTOP)
    started = time.monotonic()
    with pytest.raises(NotReplicated) as info:
        queue.add("a", b"x")
    assert info.value.code == "NOT_REPLICATED"
    assert "0 of 1 replicas" in str(info.value)
    assert time.monotonic() - started >= 0.2
    assert primary.client().exists("jobs:item:a") == 1  # took effect on the primary: ambiguous
    os.kill(_running_pid(replica), signal.SIGCONT)
    # Completes wait too, and succeed once the replica keeps up.
    patient = WorkQueue(primary.client(), "jobs", wait_replicas=1, wait_timeout_ms=5000)
    lease = patient.lease(10_000)
    assert lease is not None
    assert patient.complete(lease) is True


def test_more_replicas_than_exist_is_not_replicated(pair: tuple[RedisServer, RedisServer]) -> None:
    primary, _ = pair
    queue = WorkQueue(primary.client(), "jobs", wait_replicas=2, wait_timeout_ms=100)
    with pytest.raises(NotReplicated, match="1 of 2 replicas"):
        queue.add("a", b"x")


@pytest.mark.parametrize(("replicas", "timeout_ms"), [(1, 0), (0, 0), (-1, 100), (1001, 100), (True, 100)])
def test_bad_settings_are_refused_at_once(replicas: int, timeout_ms: int) -> None:
    client = redis.Redis(port=1)  # nothing listens: a refused setting never reaches it
    with pytest.raises(InvalidArgument):
        WorkQueue(client, "jobs", wait_replicas=replicas, wait_timeout_ms=timeout_ms)


async def test_asyncio_client_waits_too(pair: tuple[RedisServer, RedisServer]) -> None:
    primary, replica = pair
    client = aioredis.Redis(port=primary.port)
    try:
        acked = AsyncWorkQueue(client, "jobs", wait_replicas=1, wait_timeout_ms=5000)
        assert await acked.add("a", b"x") is True
        assert replica.client().exists("jobs:item:a") == 1  # WAIT returned: the replica has it
        too_many = AsyncWorkQueue(client, "jobs", wait_replicas=2, wait_timeout_ms=100)
        lease = await too_many.lease(10_000)
        assert lease is not None  # leases do not wait
        with pytest.raises(NotReplicated, match="1 of 2 replicas"):
            await too_many.complete(lease)
        assert primary.client().exists("jobs:item:a") == 0  # completed on the primary all the same
    finally:
        await client.aclose()
