"""Python, Go and TypeScript on one queue (issue #23 part 3), each through its real library and,
as a worker, its real Worker (the players of :mod:`interop_langs`).

- Every assignment of a language to each of producer, worker and cleaner (3 x 3 x 3 = 27, the 6
  permutations among them): the producer stores the retry policy and adds every item, then, as a
  consumer that crashes, leases two and never settles them; the cleaner brings those two back;
  the worker runs every item, failing some once (retried) and some always (dead-lettered under the
  producer's policy); the cleaner's language reads the dead items and the worker's failure in
  their detail. Each item is handled to success exactly once, with its exact payload bytes, and
  the queue ends empty (about a second each).
- A real Worker (Go, TypeScript) killed while its handlers run: a cleaner in another language
  brings its items back once their leases run out, a worker in the third runs them.
- A delayed add in one language and its lease in another (every ordered pair), on the server's
  frozen clock: not a millisecond early.
- A sharded queue (profile sharded, 4 shards) fed by all three and served by all three at once.
- A scheduler in each language on one queue at once (profile periodic): each slot one item.

A language whose toolchain is missing (go; node and npm) has its cases skipped, saying so.
"""

from __future__ import annotations

import base64
import itertools
import os
import re
import shutil
import signal
import subprocess
import time
import uuid
from collections import Counter
from typing import Any, Protocol

import pytest
import redis

from interop_helpers import text
from interop_langs import LANGS, ROOT, Program, PythonPlayer, Running, Subprocess, b64
from rwq import Schedule, WorkQueue
from rwq.conformance.redis_server import RedisServer
from rwq.sharded import ShardedWorkQueue

MAX_ATTEMPTS = 3
POLICY = {"max_attempts": MAX_ATTEMPTS, "backoff": "fixed", "base_ms": 50}
PAYLOADS: dict[str, bytes] = {
    "plain-0": b"hello",  # the first two are leased and abandoned by the producer
    "plain-1": bytes(range(256)),
    "plain-2": b"",
    "plain-3": b"\x00\r\n\xff\x00",
    "plain-4": "gr\u00fc\u00dfe \u2713".encode(),
    "plain-5": b"\xab" * 100_000,
    "flaky-0": b"flaky \x00",
    "flaky-1": b"\xff\xfe",
    "fail-0": b"doomed",
    "fail-1": b"\x00doomed\xff",
}
ABANDONED = ["plain-0", "plain-1"]
WORK = {"concurrency": 3, "lease_ms": 10_000, "deadline_ms": 20_000}
BUILD_TIMEOUT_S = 600


class Player(Protocol):
    lang: str

    def start(self, role: str, prefix: str, options: Any) -> Running: ...

    def run(self, role: str, prefix: str, options: Any) -> Any: ...


def quiet_run(argv: list[str], cwd: os.PathLike[str] | str) -> None:
    done = subprocess.run(argv, check=False, cwd=cwd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    assert done.returncode == 0, f"{' '.join(argv)} failed:\n{done.stdout}\n{done.stderr}"


@pytest.fixture(scope="session")
def go_program(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """go/cmd/rwq-interop, built once per session."""
    go = shutil.which("go")
    if go is None:
        pytest.skip("the Go toolchain (go) is not installed: the Go players are skipped")
    out = tmp_path_factory.mktemp("go-interop") / "rwq-interop"
    quiet_run([go, "build", "-o", str(out), "./cmd/rwq-interop"], ROOT / "go")
    return [str(out)]


@pytest.fixture(scope="session")
def ts_program() -> list[str]:
    """typescript/bin/rwq-interop.ts, compiled with the package once per session (npm ci first
    when the package's dependencies are not installed)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("Node.js (node and npm) is not installed: the TypeScript players are skipped")
    package = ROOT / "typescript"
    if not (package / "node_modules" / "typescript").is_dir():
        quiet_run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], package)
    quiet_run(
        [node, str(package / "node_modules" / "typescript" / "bin" / "tsc"), "-p", "tsconfig.json"], package
    )
    return [node, str(package / "dist" / "bin" / "rwq-interop.js")]


def player(request: pytest.FixtureRequest, server: RedisServer, lang: str) -> Player:
    """The player of ``lang`` (skipped, with the reason, when its toolchain is missing)."""
    if lang == "python":
        return PythonPlayer(server.client)
    argv = request.getfixturevalue("go_program" if lang == "go" else "ts_program")
    return Program(lang, argv, f"redis://127.0.0.1:{server.port}/0")


@pytest.fixture
def fresh_prefix() -> str:
    return f"interop:{{{uuid.uuid4().hex[:12]}}}"


def items(payloads: dict[str, bytes]) -> list[dict[str, str]]:
    return [{"id": item_id, "data": b64(data)} for item_id, data in payloads.items()]


def attempts_of(item_id: str) -> int:
    """How many handler calls an item takes: fail-* all the policy's, flaky-* two, others one."""
    return MAX_ATTEMPTS if item_id.startswith("fail-") else 2 if item_id.startswith("flaky-") else 1


def check_calls(
    calls: list[dict[str, Any]], payloads: dict[str, bytes], first_attempt: dict[str, int]
) -> None:
    """Every item handled to success exactly once (fail-* never), each call with the exact payload
    and attempt numbers 1, 2, ... from the item's first attempt at the worker."""
    for call in calls:
        assert base64.b64decode(call["data"]) == payloads[call["id"]], f"wrong payload for {call['id']}"
    successes = Counter(call["id"] for call in calls if call["ok"])
    assert successes == Counter({i: 1 for i in payloads if not i.startswith("fail-")})
    for item_id in payloads:
        seen = sorted(call["attempt"] for call in calls if call["id"] == item_id)
        start = first_attempt.get(item_id, 1)
        assert seen == list(range(start, start + attempts_of(item_id))), f"attempts of {item_id}: {seen}"


def keys(db: redis.Redis) -> set[str]:
    return {text(key) for key in db.keys("*")}


# --- every role in every language ------------------------------------------------------------------


@pytest.mark.parametrize(("producer", "worker", "cleaner"), list(itertools.product(LANGS, repeat=3)))
def test_producer_worker_and_cleaner_in_three_languages(
    request: pytest.FixtureRequest,
    *,
    redis_server: RedisServer,
    r: redis.Redis,
    fresh_prefix: str,
    producer: str,
    worker: str,
    cleaner: str,
) -> None:
    make, work, clean = (player(request, redis_server, lang) for lang in (producer, worker, cleaner))
    prefix, done_key = fresh_prefix, f"{fresh_prefix}:interop-done"

    # The producer stores the policy and adds; then, as a consumer that crashes, holds two items.
    assert make.run("produce", prefix, {"policy": POLICY, "items": items(PAYLOADS)}) == {
        "added": [True] * len(PAYLOADS)
    }
    held = make.run("lease", prefix, {"count": len(ABANDONED), "lease_ms": 60_000})
    assert [(got["id"], base64.b64decode(got["data"]), got["attempt"]) for got in held["leased"]] == [
        (item_id, PAYLOADS[item_id], 1) for item_id in ABANDONED
    ]
    assert WorkQueue(r, prefix).retry_policy() is not None

    # Nothing to clean while those leases live; once they run out, the cleaner brings both back.
    # (Their TTL is cut to 1 ms on the server rather than waited for.)
    assert clean.run("clean", prefix, {})["light"]["requeued"] == []
    for item_id in ABANDONED:
        assert r.pexpire(f"{prefix}:lease:{item_id}", 1)
    deadline = time.monotonic() + 5
    while r.exists(*(f"{prefix}:lease:{item_id}" for item_id in ABANDONED)):
        assert time.monotonic() < deadline, "the leases did not run out"
    cleaned = clean.run("clean", prefix, {})
    assert sorted(cleaned["light"]["requeued"]) == ABANDONED
    assert cleaned["light"]["dead"] == []
    assert cleaned["light"]["dropped"] == 0
    assert cleaned["deep"] == {"requeued": [], "dropped": 0, "dead": [], "promoted": 0}

    # The worker runs everything under the producer's policy (not its own default of 5 attempts).
    r.set(done_key, b"1")
    result = work.run("work", prefix, {**WORK, "done_key": done_key})
    assert result["timed_out"] is False
    check_calls(result["calls"], PAYLOADS, dict.fromkeys(ABANDONED, 2))

    # The third language reads the dead items: the worker's failure, with its detail.
    dead = {item["id"]: item for item in clean.run("dead", prefix, {})}
    assert set(dead) == {"fail-0", "fail-1"}
    for item_id, item in dead.items():
        assert item["attempts"] == MAX_ATTEMPTS
        assert f"failed {item_id} at attempt 3" in item["reason"], item["reason"]
        assert f"failed {item_id} at attempt 3" in item["detail"], item["detail"]
        assert base64.b64decode(item.get("data", "")) == PAYLOADS[item_id]
    counts = WorkQueue(r, prefix).counts()
    assert (counts.queued, counts.processing, counts.delayed, counts.dead) == (0, 0, 0, 2)
    assert clean.run("clean", prefix, {})["light"] == {
        "requeued": [],
        "dropped": 0,
        "dead": [],
        "promoted": 0,
    }
    # Nothing left of the queue but its policy and dead set (and this test's done key).
    assert keys(r) == {
        f"{prefix}:{key}" for key in ("policy", "dead", "dead:data", "dead:info", "interop-done")
    }


# --- a worker killed in one language, its items brought back by another's cleaner -----------------


@pytest.mark.parametrize(
    ("victim", "cleaner", "worker"), [("go", "typescript", "python"), ("typescript", "python", "go")]
)
def test_the_items_of_a_killed_worker_come_back_through_another_languages_cleaner(
    request: pytest.FixtureRequest,
    *,
    redis_server: RedisServer,
    r: redis.Redis,
    fresh_prefix: str,
    victim: str,
    cleaner: str,
    worker: str,
) -> None:
    """A real Worker (Go or TypeScript) SIGKILLed while its handlers run: its renewed leases keep
    the items from every cleaner until they run out; then a cleaner in another language brings
    them back, and a worker in the third runs everything once."""
    prefix, done_key = fresh_prefix, f"{fresh_prefix}:interop-done"
    payloads = {f"item-{n}": bytes([n, 0, 255]) * (n + 1) for n in range(6)}
    assert (
        player(request, redis_server, worker).run("produce", prefix, {"items": items(payloads)})["added"]
        == [True] * 6
    )
    doomed = player(request, redis_server, victim)
    assert isinstance(doomed, Program)
    running = doomed.start(
        "work", prefix, {"concurrency": 2, "lease_ms": 10_000, "handler_ms": 60_000, "done_key": done_key}
    )
    running.wait_ready()
    queue = WorkQueue(r, prefix)
    deadline = time.monotonic() + 10
    while queue.counts().processing < 2:
        assert time.monotonic() < deadline, "the worker never took two items"
        time.sleep(0.02)
    assert isinstance(running, Subprocess)
    running.kill()
    held = sorted(text(raw) for raw in r.lrange(f"{prefix}:processing", 0, -1))
    assert len(held) == 2

    clean = player(request, redis_server, cleaner)
    assert clean.run("clean", prefix, {})["light"]["requeued"] == []  # the dead worker's leases still live
    for item_id in held:
        assert r.pexpire(f"{prefix}:lease:{item_id}", 1)
    while r.exists(*(f"{prefix}:lease:{item_id}" for item_id in held)):
        assert time.monotonic() < deadline + 5, "the leases did not run out"
    assert sorted(clean.run("clean", prefix, {})["light"]["requeued"]) == held

    r.set(done_key, b"1")
    result = player(request, redis_server, worker).run("work", prefix, {**WORK, "done_key": done_key})
    assert result["timed_out"] is False
    check_calls(result["calls"], payloads, dict.fromkeys(held, 2))
    counts = queue.counts()
    assert (counts.queued, counts.processing, counts.delayed, counts.dead) == (0, 0, 0, 0)


# --- a delayed add in one language, its lease in another --------------------------------------------

DELAY_MS = 60_000


@pytest.mark.parametrize(("adder", "leaser"), list(itertools.permutations(LANGS, 2)))
def test_a_delayed_add_is_leased_in_another_language_when_due(
    request: pytest.FixtureRequest,
    *,
    frozen_server: RedisServer,
    fr: redis.Redis,
    fresh_prefix: str,
    adder: str,
    leaser: str,
) -> None:
    """On the server's frozen clock: the item is not leased a millisecond before it is due."""
    add, lease = player(request, frozen_server, adder), player(request, frozen_server, leaser)
    payload = b"\x00later\xff" + bytes(range(256))
    now = {"id": "now", "data": b64(b"N")}
    later = {"id": "later", "data": b64(payload), "delay_ms": DELAY_MS}
    assert add.run("produce", fresh_prefix, {"items": [later, now]}) == {"added": [True, True]}
    counts = WorkQueue(fr, fresh_prefix).counts()
    assert (counts.queued, counts.delayed) == (1, 1)

    took = lease.run("lease", fresh_prefix, {"count": 2, "lease_ms": 5000, "complete": True})
    assert [(got["id"], got["data"]) for got in took["leased"]] == [("now", now["data"])]
    assert took["completed"] == [True]
    frozen_server.advance(DELAY_MS - 1)
    assert lease.run("lease", fresh_prefix, {"count": 1, "lease_ms": 5000})["leased"] == []
    frozen_server.advance(1)
    took = lease.run("lease", fresh_prefix, {"count": 2, "lease_ms": 5000, "complete": True})
    assert [(got["id"], base64.b64decode(got["data"])) for got in took["leased"]] == [("later", payload)]
    assert took["completed"] == [True]
    assert keys(fr) == set()


# --- one sharded queue, three languages at once -----------------------------------------------------

SHARDS = 4
SHARDED_ITEMS = 60


def test_a_sharded_queue_fed_and_served_by_three_languages_at_once(
    request: pytest.FixtureRequest, redis_server: RedisServer, r: redis.Redis, fresh_prefix: str
) -> None:
    """Profile sharded (4 shards): a worker in each language runs while the three produce, a third
    of the items each (the first also storing the policy); every item is handled to success once
    by some worker, each worker takes part, and the failing items end dead on their shards."""
    langs = {lang: player(request, redis_server, lang) for lang in LANGS}
    prefix = fresh_prefix.replace("{", "").replace("}", "")  # each shard gets a hash tag of its own
    done_key = f"interop-done:{prefix}"
    payloads = {
        (f"fail-{n}" if n % 20 == 7 else f"flaky-{n}" if n % 10 == 3 else f"item-{n}"): f"{n}:".encode()
        + bytes([n, 0, 255])
        for n in range(SHARDED_ITEMS)
    }
    options = {
        "shards": SHARDS,
        "concurrency": 2,
        "lease_ms": 10_000,
        "handler_ms": 20,
        "deadline_ms": 20_000,
    }
    workers = {
        lang: play.start("work", prefix, {**options, "done_key": done_key}) for lang, play in langs.items()
    }
    for running in workers.values():
        running.wait_ready()

    ordered = list(items(payloads))
    for n, play in enumerate(langs.values()):
        share = {"shards": SHARDS, "items": ordered[n::3], **({"policy": POLICY} if n == 0 else {})}
        assert play.run("produce", prefix, share) == {"added": [True] * len(ordered[n::3])}
    r.set(done_key, b"1")
    results = {lang: running.result() for lang, running in workers.items()}

    calls = [call for result in results.values() for call in result["calls"]]
    assert not any(result["timed_out"] for result in results.values())
    check_calls(calls, payloads, {})
    for lang, result in results.items():
        assert any(call["ok"] for call in result["calls"]), f"the {lang} worker handled nothing"
    dead = {item["id"]: item for item in langs["typescript"].run("dead", prefix, {"shards": SHARDS})}
    assert set(dead) == {item_id for item_id in payloads if item_id.startswith("fail-")}
    assert all(item["attempts"] == MAX_ATTEMPTS for item in dead.values())
    shard_keys = {key[: key.index("}") + 1] for key in keys(r) if key != done_key}
    assert shard_keys <= {f"{{{prefix}#{n}}}" for n in range(SHARDS)} | {f"{{{prefix}#bell}}"}
    shards = ShardedWorkQueue(r, prefix, shards=SHARDS).queues
    assert [(c.queued, c.processing, c.delayed) for c in (shard.counts() for shard in shards)] == [
        (0, 0, 0)
    ] * SHARDS
    assert sum(shard.counts().dead for shard in shards) == len(dead)


SCHEDULES = ("a", "b", "c")
SCHEDULE_RUN_S = 5.0


def grown(r: redis.Redis, key: str, length: int) -> None:
    """Wait (15 s at most) until list ``key`` holds ``length`` entries."""
    deadline = time.monotonic() + 15
    while r.llen(key) < length:
        assert time.monotonic() < deadline, f"{key} holds {r.llen(key)} entries, not {length}"
        time.sleep(0.05)


def registered(queue: WorkQueue, langs: set[str]) -> None:
    """Wait (15 s at most) until a live scheduler of each language in ``langs`` is registered."""
    deadline = time.monotonic() + 15
    while True:
        kinds = {(w.record.get("kind"), w.record.get("language")) for w in queue.workers()}
        if {("scheduler", lang) for lang in langs} <= kinds:
            return
        assert time.monotonic() < deadline, f"schedulers registered: {kinds}"
        time.sleep(0.05)


def test_schedulers_in_three_languages_fire_each_slot_once(
    request: pytest.FixtureRequest, redis_server: RedisServer, r: redis.Redis, fresh_prefix: str
) -> None:
    """Profile periodic (SPEC §23): a Go, a TypeScript and a Python scheduler (``rwq scheduler``)
    on one queue over three 1 s schedules, together for 5 s. All three register as live
    schedulers; every slot from each schedule's put to its watermark is one item, fired by one of
    them (their logs name each id once between them), none twice, none lost."""
    go, ts = (player(request, redis_server, lang) for lang in ("go", "typescript"))
    queue = WorkQueue(r, fresh_prefix)
    for name in SCHEDULES:
        assert queue.put_schedule(name, Schedule.every(1000))
    starts = {s.name: s.last_fired_ms or 0 for s in queue.schedules().schedules}
    url = f"redis://127.0.0.1:{redis_server.port}/0"
    key = f"{fresh_prefix}:queue"
    # TypeScript alone until it fired a slot of each schedule, then all three together for 5 s,
    # then Python alone for three more slots: so each language fires some, and the slots of each
    # phase and of the changes between them are checked alike.
    ts_run = ts.start("schedule", fresh_prefix, {"deadline_ms": int(SCHEDULE_RUN_S * 1000) + 3000})
    grown(r, key, 3)
    python = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "rwq"), "scheduler", "--prefix", fresh_prefix, "--url", url],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        registered(queue, {"python", "typescript"})  # the Python interpreter starts slowest
        go_run = go.start("schedule", fresh_prefix, {"deadline_ms": int(SCHEDULE_RUN_S * 1000)})
        registered(queue, set(LANGS))
        fired = {"go": go_run.result()["fired"], "typescript": ts_run.result()["fired"]}
        grown(r, key, r.llen(key) + 3)
    finally:
        python.send_signal(signal.SIGTERM)
        _, log = python.communicate(timeout=30)
    assert python.returncode == 0, log
    fired["python"] = re.findall(r" fired (\S+)$", log, re.M)
    ids = [text(i) for i in r.lrange(f"{fresh_prefix}:queue", 0, -1)]
    assert len(set(ids)) == len(ids), "a slot fired twice"
    assert sorted(ids) == sorted(i for lang in LANGS for i in fired[lang]), fired
    expected = [
        f"{s.name}@{slot}"
        for s in queue.schedules().schedules
        for slot in range((starts[s.name] // 1000 + 1) * 1000, (s.last_fired_ms or 0) + 1, 1000)
    ]
    assert sorted(ids) == sorted(expected), "a slot was lost"
    assert len(ids) >= 3 * (SCHEDULE_RUN_S - 1), ids
    assert len(fired["typescript"]) >= 3, fired  # alone at the start
    assert len(fired["python"]) >= 3, fired  # alone at the end
    print({lang: len(fired[lang]) for lang in LANGS}, "of", len(ids), "slots")  # the share of each language
