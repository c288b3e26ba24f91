"""Profile periodic (SPEC §23) through the reference client: schedules, fire, and the schedulers,
on a frozen-clock server."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis
from click.testing import CliRunner
from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]

from rwq import AsyncScheduler, AsyncWorkQueue, InvalidArgument, Schedule, Scheduler, WorkQueue
from rwq.cli import cli
from rwq.conformance.redis_server import RedisServer
from rwq.periodic import Tick
from rwq.protocol.periodic import Fired, StoredSchedule
from rwq.sharded import ShardedWorkQueue

EVERY = Schedule.every(60_000)
CLI_SCHEMA = json.loads(
    (Path(__file__).resolve().parents[1] / "schemas" / "cli-output.schema.json").read_text()
)


@pytest.fixture
def fr(frozen_server: RedisServer) -> Iterator[redis.Redis]:
    client = frozen_server.client()
    client.flushall()
    yield client
    client.close()


def now_ms(r: redis.Redis) -> int:
    seconds, micros = r.time()
    return int(seconds) * 1000 + int(micros) // 1000


def to_slot(r: redis.Redis, server: RedisServer, every: int = 60_000, extra: int = 0) -> int:
    """Advance the frozen clock to the next grid slot (plus ``extra`` ms); that slot."""
    slot = (now_ms(r) // every + 1) * every
    server.advance(slot + extra - now_ms(r))
    return slot


@pytest.mark.parametrize(
    "bad",
    [
        lambda: Schedule.every(999),
        lambda: Schedule.every(1000, offset_ms=1000),
        lambda: Schedule.every(1000, missed="never"),
        lambda: Schedule.every(1000, grace_ms=86_400_001),
        lambda: Schedule(every_ms=1000, cron="* * * * *").checked(),
        lambda: Schedule().checked(),
        lambda: Schedule(cron="* * * * *", tz="Europe/Lon don").checked(),
    ],
)
def test_bad_definitions_are_refused_before_any_io(bad: object) -> None:
    """RWQ-SCHED-001."""
    with pytest.raises(InvalidArgument):
        bad()  # type: ignore[operator]


def test_bad_names_and_sharded_queues_send_nothing(fr: redis.Redis) -> None:
    """RWQ-SCHED-001, -016: nothing reaches Redis."""
    queue = WorkQueue(fr, "p")
    for name in ("", "x" * 201, ".a", "a@1", "a b"):
        with pytest.raises(InvalidArgument):
            queue.put_schedule(name, EVERY)
    with pytest.raises(InvalidArgument):
        queue.fire("s", "0" * 40, [])
    with pytest.raises(InvalidArgument):
        queue.fire("s", "0" * 40, [2000, 1000])
    with pytest.raises(InvalidArgument, match="RWQ-SCHED-016"):
        ShardedWorkQueue(fr, "p", shards=2).put_schedule("s", EVERY)
    assert fr.dbsize() == 0
    queue.put_schedule("x" * 200, Schedule.every(31_536_000_000, offset_ms=31_535_999_999))
    assert [s.name for s in queue.schedules().schedules] == ["x" * 200]


def test_put_list_pause_resume_remove(fr: redis.Redis, frozen_server: RedisServer) -> None:
    queue = WorkQueue(fr, "p")
    assert queue.put_schedule("s", EVERY, b"data") is True
    start = now_ms(fr)
    frozen_server.advance(1000)
    assert queue.put_schedule("s", Schedule.every(1000), b"other") is False
    assert queue.pause_schedule("s") is True
    assert queue.pause_schedule("s") is False
    listing = queue.schedules()
    definition = b'{"v":1,"every_ms":1000,"offset_ms":0,"missed":"skip","grace_ms":60000}'
    assert listing.schedules == [StoredSchedule("s", definition, b"other", start, start + 1000)]
    assert listing.now_ms == start + 1000
    assert queue.resume_schedule("s") is True
    assert queue.schedules().schedules[0].last_fired_ms == start + 1000
    assert queue.remove_schedule("s") is True
    assert queue.remove_schedule("s") is False
    assert fr.dbsize() == 0


def test_a_tick_fires_at_the_slot_once(fr: redis.Redis, frozen_server: RedisServer) -> None:
    """RWQ-SCHED-002, -008, -011: nothing at slot - 1 ms; the item at the slot; a tick after the
    item was completed fires nothing (the watermark)."""
    queue = WorkQueue(fr, "p")
    queue.put_schedule("s", EVERY, b"x")
    scheduler = Scheduler(queue, heartbeat=False)
    slot = to_slot(fr, frozen_server, extra=-1)
    assert scheduler.tick().fired == []
    frozen_server.advance(1)
    tick = scheduler.tick()
    assert (tick.fired, tick.now_ms, tick.next_ms) == ([f"s@{slot}"], slot, slot + 60_000)
    lease = queue.lease(1000)
    assert lease is not None
    assert lease.data == b"x"
    queue.complete(lease)
    assert scheduler.tick().fired == []


def test_missed_slots_skip_and_once(fr: redis.Redis, frozen_server: RedisServer) -> None:
    """RWQ-SCHED-010: after a 10-minute stall, skip fires the on-time slot only, once fires the
    latest late one when none is on time."""
    queue = WorkQueue(fr, "p")
    queue.put_schedule("skip", Schedule.every(60_000, grace_ms=1000))
    queue.put_schedule("once", Schedule.every(60_000, missed="once", grace_ms=1000))
    slot = to_slot(fr, frozen_server)
    frozen_server.advance(10 * 60_000 - 30_000)
    fired = Scheduler(queue, heartbeat=False).tick().fired
    assert fired == [f"once@{slot + 9 * 60_000}"]
    frozen_server.advance(30_000)
    assert sorted(Scheduler(queue, heartbeat=False).tick().fired) == [
        f"once@{slot + 600_000}",
        f"skip@{slot + 600_000}",
    ]


def test_a_stalled_tick_fires_every_on_time_slot_oldest_first(
    fr: redis.Redis, frozen_server: RedisServer
) -> None:
    queue = WorkQueue(fr, "p")
    queue.put_schedule("s", Schedule.every(1000))
    slot = to_slot(fr, frozen_server, every=1000, extra=2500)
    assert Scheduler(queue, heartbeat=False).tick().fired == [
        f"s@{slot}",
        f"s@{slot + 1000}",
        f"s@{slot + 2000}",
    ]
    assert fr.lrange("p:queue", 0, -1) == [f"s@{slot + n}".encode() for n in (2000, 1000, 0)]


def test_stale_and_bad_definitions(
    fr: redis.Redis, frozen_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """RWQ-SCHED-009, -017: a changed definition makes a fire stale; one that does not parse is
    skipped and logged once."""
    queue = WorkQueue(fr, "p")
    queue.put_schedule("s", EVERY)
    slot = to_slot(fr, frozen_server)
    stored = queue.schedules().schedules[0]
    queue.put_schedule("s", Schedule.every(30_000))
    reply = queue.fire("s", stored.digest, [slot])
    assert (reply.status, reply.outcomes, fr.exists("p:queue")) == ("stale", [], 0)
    assert queue.fire("gone", stored.digest, [slot]).status == "gone"
    fr.hset("p:schedules", "v2", '{"v":2,"every_ms":1000}')
    scheduler = Scheduler(queue, heartbeat=False)
    with caplog.at_level(logging.WARNING, "rwq.scheduler"):
        scheduler.tick()
        scheduler.tick()
    assert [r.message for r in caplog.records if "v2" in r.message] == [
        "schedule v2 is skipped: the definition is not a version 1 object (RWQ-SCHED-017)"
    ]


def test_a_jump_back_fires_nothing_twice(
    fr: redis.Redis, frozen_server: RedisServer, redis_server: RedisServer
) -> None:
    """A server clock jump back (RedisServer.rewind, the runner's rewind_time_ms) fires no slot
    again; a rewind needs a positive step on a frozen clock."""
    with pytest.raises(ValueError, match="positive"):
        frozen_server.rewind(-1)
    with pytest.raises(RuntimeError, match="frozen_clock"):
        redis_server.rewind(1)
    queue = WorkQueue(fr, "p")
    queue.put_schedule("s", EVERY)
    slot = to_slot(fr, frozen_server)
    assert Scheduler(queue, heartbeat=False).tick().fired == [f"s@{slot}"]
    fr.delete("p:queue", f"p:item:s@{slot}")
    frozen_server.rewind(600_000)
    assert Scheduler(queue, heartbeat=False).tick().fired == []
    frozen_server.advance(600_000 + 60_000)
    assert Scheduler(queue, heartbeat=False).tick().fired == [f"s@{slot + 60_000}"]


async def test_the_async_scheduler_fires_and_registers(frozen_server: RedisServer) -> None:
    client = aioredis.Redis(host="127.0.0.1", port=frozen_server.port)
    await client.flushall()
    queue = AsyncWorkQueue(client, "p")
    await queue.put_schedule("s", EVERY)
    seconds, micros = await client.time()
    now = int(seconds) * 1000 + int(micros) // 1000
    slot = (now // 60_000 + 1) * 60_000
    frozen_server.advance(slot - now)
    scheduler = AsyncScheduler(queue)
    task = asyncio.create_task(scheduler.run())
    for _ in range(200):
        await asyncio.sleep(0.01)
        if await client.exists(f"p:item:s@{slot}") and await queue.workers():
            break
    (worker,) = await queue.workers()
    assert worker.record["kind"] == "scheduler"
    scheduler.stop()
    await asyncio.wait_for(task, 5)
    assert await queue.workers() == []
    assert await client.exists(f"p:item:s@{slot}") == 1
    await client.aclose()


def test_a_scheduler_thread_stops_and_leaves(fr: redis.Redis) -> None:
    queue = WorkQueue(fr, "p")
    scheduler = Scheduler(queue)
    thread = threading.Thread(target=scheduler.run)
    thread.start()
    deadline = time.monotonic() + 5
    while not queue.workers() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert queue.workers()[0].record["kind"] == "scheduler"
    scheduler.stop()
    thread.join(5)
    assert not thread.is_alive()
    assert queue.workers() == []


SCHEDULERS, SLOTS, SCHEDULES = 8, 25, 3


def test_many_concurrent_schedulers_fire_each_slot_once(fr: redis.Redis, frozen_server: RedisServer) -> None:
    """No slot twice, none lost: 8 schedulers, each on its own connection, tick at once at each
    of 25 slots of 3 schedules. Figures for the closing note are printed (pytest -s)."""
    setup = WorkQueue(fr, "p")
    for n in range(SCHEDULES):
        setup.put_schedule(f"s{n}", Schedule.every(1000))
    clients = [frozen_server.client() for _ in range(SCHEDULERS)]
    schedulers = [Scheduler(WorkQueue(c, "p"), heartbeat=False) for c in clients]
    fired: Counter[str] = Counter()
    calls = 0
    slot = to_slot(fr, frozen_server, every=1000)
    first = slot
    for _round in range(SLOTS):
        barrier = threading.Barrier(SCHEDULERS)
        results: list[list[str]] = [[] for _ in schedulers]

        def run(i: int, barrier: threading.Barrier, results: list[list[str]]) -> None:
            barrier.wait(5)
            results[i] = schedulers[i].tick().fired

        threads = [threading.Thread(target=run, args=(i, barrier, results)) for i in range(SCHEDULERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        fired.update(item for result in results for item in result)
        calls += SCHEDULERS * (1 + SCHEDULES)
        frozen_server.advance(1000)
        slot += 1000
    expected = {f"s{n}@{first + 1000 * k}" for n in range(SCHEDULES) for k in range(SLOTS)}
    raw: list[bytes] = fr.lrange("p:queue", 0, -1)  # type: ignore[assignment]
    queued = [item.decode() for item in raw]
    duplicates = sum(c - 1 for c in fired.values()) + len(queued) - len(set(queued))
    print(
        f"\nperiodic concurrency: {SCHEDULERS} schedulers x {SLOTS} slots x {SCHEDULES} schedules: "
        f"{len(set(queued))} items created of {len(expected)}, duplicates {duplicates}, "
        f"lost {len(expected - set(queued))}, script calls {calls}"
    )
    assert set(fired) == expected == set(queued)
    assert duplicates == 0
    for c in clients:
        c.close()


def rwq(server: RedisServer, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, [*args, "--url", server.url, "--json"])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.output)
    Draft202012Validator(CLI_SCHEMA).validate(document)
    return document


def test_schedule_add_stores_the_bytes_of_a_data_argument_that_is_not_utf8(
    fr: redis.Redis, frozen_server: RedisServer
) -> None:
    """``--data`` of bytes that are not UTF-8 (argv gives them to Python as surrogate escapes) is
    stored as those bytes, not refused with a traceback."""
    rwq(frozen_server, "schedule", "add", "bin", "-q", "p", "--every-ms", "1000", "--data", "a\udcffb")
    assert fr.hget("p:schedules:data", "bin") == b"a\xffb"


def test_the_schedule_commands(fr: redis.Redis, frozen_server: RedisServer) -> None:
    """rwq schedule add, list, next, pause, resume, remove, with --json (the cli-output schema)."""
    add = ("schedule", "add", "tick", "-q", "p", "--every-ms", "60000", "--data", "hello")
    assert rwq(frozen_server, *add)["created"] is True
    assert rwq(frozen_server, *add)["created"] is False
    now = now_ms(fr)
    listed = rwq(frozen_server, "schedule", "list", "-q", "p")
    (entry,) = listed["schedules"]
    assert entry["schedule"] == {
        "v": 1,
        "every_ms": 60_000,
        "offset_ms": 0,
        "missed": "skip",
        "grace_ms": 60_000,
    }
    assert (entry["data"], entry["last_fired_ms"], entry["paused_ms"]) == ("hello", now, None)
    assert entry["next_ms"] == (now // 60_000 + 1) * 60_000
    slots = rwq(frozen_server, "schedule", "next", "tick", "-q", "p", "--count", "3")["slots_ms"]
    assert slots == [entry["next_ms"] + n * 60_000 for n in range(3)]
    assert rwq(frozen_server, "schedule", "pause", "tick", "-q", "p")["done"] is True
    assert rwq(frozen_server, "schedule", "resume", "tick", "-q", "p")["done"] is True
    assert rwq(frozen_server, "schedule", "remove", "tick", "-q", "p")["done"] is True
    assert rwq(frozen_server, "schedule", "remove", "tick", "-q", "p")["done"] is False
    refused = CliRunner().invoke(
        cli,
        ["schedule", "add", "t", "-q", "p", "--url", frozen_server.url, "--every-ms", "999", "--data", ""],
    )
    assert refused.exit_code == 1
    assert "INVALID_ARGUMENT" in refused.output
    assert fr.dbsize() == 0


def test_rwq_worker_with_a_scheduler_runs_what_it_fires(
    tmp_path: Path, r: redis.Redis, redis_server: RedisServer
) -> None:
    """rwq worker --scheduler: a slot of a 1-second schedule becomes an item the worker handles;
    SIGTERM stops both (exit 0), and the scheduler leaves the live workers."""
    (tmp_path / "tasks.py").write_text(
        "import os, redis\nr = redis.Redis.from_url(os.environ['RWQ_URL'])\n"
        "def handle(job):\n    r.rpush('done', job.id)\n"
    )
    WorkQueue(r, "jobs").put_schedule("tick", Schedule.every(1000, grace_ms=5000), b"x")
    env = {**os.environ, "RWQ_URL": redis_server.url}
    command = [sys.executable, "-m", "rwq.console", "worker", "tasks:handle", "-q", "jobs", "--scheduler"]
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not r.llen("done"):
        assert time.monotonic() < deadline
        assert process.poll() is None
        time.sleep(0.05)
    kinds = {w.record["kind"] for w in WorkQueue(r, "jobs").workers()}
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    assert kinds == {"worker", "scheduler"}
    done: list[bytes] = r.lrange("done", 0, 0)  # type: ignore[assignment]
    assert done[0].startswith(b"tick@")
    assert WorkQueue(r, "jobs").workers() == []


def test_rwq_scheduler_exits_0_on_sigterm(r: redis.Redis, redis_server: RedisServer) -> None:
    env = {**os.environ, "RWQ_URL": redis_server.url}
    command = [sys.executable, "-m", "rwq.console", "scheduler", "-q", "jobs"]
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not WorkQueue(r, "jobs").workers():
        assert time.monotonic() < deadline
        assert process.poll() is None
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr


def test_a_scheduler_waits_until_its_next_slot_by_the_server_clock() -> None:
    """RWQ-SCHED-018: until the next slot, counted from the reply's now on the monotonic clock;
    at least 1 ms, at most 10,000 ms."""
    start = time.monotonic()
    assert 400 <= Scheduler.wait_ms(Tick([], 1000, 1500), start) <= 500
    assert Scheduler.wait_ms(Tick([], 1000, 1500), start - 0.3) <= 200
    assert Scheduler.wait_ms(Tick([], 1000, 900), start) == 1
    assert Scheduler.wait_ms(Tick([], 1000, 1000 + 3_600_000), start) == 10_000
    assert Scheduler.wait_ms(Tick([], 1000, None), start) == 10_000


def test_a_cron_schedule_fires_in_its_zone(fr: redis.Redis, frozen_server: RedisServer) -> None:
    """SPEC §23.2 through the scheduler: hourly in Asia/Kolkata is at :30 UTC; the CLI adds and
    walks a cron schedule, and refuses a day that never comes before any I/O."""
    queue = WorkQueue(fr, "p")
    slot = to_slot(fr, frozen_server, every=3_600_000, extra=-1) + 1_800_000
    frozen_server.advance(slot - now_ms(fr) - 1)
    queue.put_schedule("h", Schedule.cron_in("@hourly", "Asia/Kolkata"), b"x")
    assert Scheduler(queue, heartbeat=False).tick().fired == []
    frozen_server.advance(1)
    tick = Scheduler(queue, heartbeat=False).tick()
    assert (tick.fired, tick.next_ms) == ([f"h@{slot}"], slot + 3_600_000)
    add = (
        "schedule",
        "add",
        "n",
        "-q",
        "p",
        "--cron",
        "30 2 * * *",
        "--tz",
        "America/New_York",
        "--data",
        "",
    )
    assert rwq(frozen_server, *add)["created"] is True
    nights = rwq(frozen_server, "schedule", "next", "n", "-q", "p", "--count", "2")["slots_ms"]
    assert all(n // 1000 % 86400 in (27_000, 23_400) for n in nights)  # 02:30 EST or EDT: 07:30 or 06:30 UTC
    assert nights[1] - nights[0] in (86_400_000, 82_800_000, 90_000_000)
    refused = CliRunner().invoke(
        cli,
        ["schedule", "add", "t", "-q", "p", "--url", frozen_server.url, "--cron", "0 0 30 2 *", "--data", ""],
    )
    assert refused.exit_code == 1
    assert "RWQ-SCHED-007" in refused.output


class CountingQueue(WorkQueue):
    """A queue that counts its fire calls and the slots they found old (another scheduler's)."""

    calls = 0
    old = 0

    def fire(self, name: str, digest: str, slots: Sequence[int]) -> Fired:
        reply = super().fire(name, digest, slots)
        CountingQueue.calls += 1
        CountingQueue.old += reply.outcomes.count("old")
        return reply


def test_schedulers_running_on_the_server_clock_lose_no_slot(r: redis.Redis) -> None:
    """Four Scheduler.run threads (heartbeats on) for 4 s of real time on two 1 s schedules:
    every slot up to the stop becomes exactly one item. Figures printed for the closing note."""
    setup = WorkQueue(r, "p")
    for name in ("a", "b"):
        setup.put_schedule(name, Schedule.every(1000, grace_ms=60_000), b"x")
    start = setup.schedules().now_ms
    CountingQueue.calls = CountingQueue.old = 0
    schedulers = [Scheduler(CountingQueue(r, "p")) for _ in range(4)]
    threads = [threading.Thread(target=s.run) for s in schedulers]
    for t in threads:
        t.start()
    time.sleep(4)
    for s in schedulers:
        s.stop()
    for t in threads:
        t.join(10)
    end = setup.schedules().now_ms
    raw: list[bytes] = r.lrange("p:queue", 0, -1)  # type: ignore[assignment]
    queued = Counter(item.decode() for item in raw)
    due = {f"{n}@{slot}" for n in ("a", "b") for slot in range(start // 1000 * 1000 + 1000, end - 300, 1000)}
    lost, duplicates = due - set(queued), sum(c - 1 for c in queued.values())
    print(
        f"\nperiodic on a running clock: 4 schedulers x {(end - start) / 1000:.1f} s x 2 schedules of 1 s: "
        f"{len(queued)} items for {len(due)} slots due, duplicates {duplicates}, lost {len(lost)}, "
        f"fire calls {CountingQueue.calls} ({CountingQueue.old} slots found already fired)"
    )
    assert not any(t.is_alive() for t in threads)
    assert (lost, duplicates) == (set(), 0)
    assert WorkQueue(r, "p").workers() == []


def test_without_the_cron_extra_cron_schedules_are_a_typed_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without croniter, a cron definition is InvalidArgument (a scheduler skips it), not a crash."""
    from rwq.protocol import cron, periodic  # noqa: PLC0415

    def missing(texts: list[str]) -> list[frozenset[int]]:
        raise ImportError("cron schedules need the 'cron' extra: pip install 'rwq[cron]'")

    monkeypatch.setattr(cron, "_expand", missing)
    periodic.cron_schedule.cache_clear()
    with pytest.raises(InvalidArgument, match="extra"):
        Schedule.cron_in("5 4 * * *")
    periodic.cron_schedule.cache_clear()
