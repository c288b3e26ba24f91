"""rwq five ways: the shipped client, with profile declared-keys, with profile stats on, a lean
shell over the same scripts, and the prototypes.

``rwq`` is the product (``WorkQueue``), draining as its worker does: ``lease`` once, then one
``complete_and_lease`` per item. ``rwq-declared`` is the same with profile declared-keys (SPEC
§20): every call passes every key its script touches, and the leasing calls their windows.
``rwq-stats`` is the shipped client on a queue whose statistics are on (profile stats, SPEC §22):
what counting every event costs.
``rwq-lean`` calls EVALSHA on the same canonical scripts with
prebuilt arguments and no plan, validation or result objects: the gap between the two is the
client's own overhead. ``rwq-proto`` runs the prototypes of :mod:`bench.proto` (a one-round-trip
blocking lease; a complete without LREM): what those changes would gain.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Barrier
from typing import Any, ClassVar

import redis

from bench.core import LEASE_MS, stopwatch
from bench.peers.base import (
    Drained,
    DrainProcess,
    Peer,
    ProcessJob,
    Unsupported,
    WakeConsumer,
    check_drained,
    now,
)
from bench.proto import CLAIM_HEAD, blocking_lease_pipelined
from rwq import WorkQueue
from rwq.protocol.scripts import registry

PREFIXES = {
    "rwq": "rwq0",
    "rwq-declared": "rwqd",
    "rwq-stats": "rwqs",
    "rwq-lean": "rwql",
    "rwq-proto": "rwqp",
}
"""Each variant has its own queue: interleaved runs keep all of them in Redis at once. Four
characters, as redis-work-queue's ``q015``, so that key names weigh the same in the memory figure."""


def _queue(url: str, peer: str = "rwq") -> tuple[redis.Redis, WorkQueue]:
    r = redis.Redis.from_url(url)
    wq = WorkQueue(r, PREFIXES[peer], declared_keys=peer == "rwq-declared")
    wq.counts()  # the one-time server check
    if peer == "rwq-stats":
        wq.enable_stats()
    return r, wq


def _drain(wq: WorkQueue, batch: int = 1, limit: int | None = None) -> int:
    """Lease, then complete what was leased and lease the next in one call, until empty (or
    ``limit`` items, the last of them completed without leasing more)."""
    held = wq.lease_many(count=batch if limit is None else min(batch, limit), lease_ms=LEASE_MS)
    done = 0
    while held:
        done += len(held)
        size = batch if limit is None else min(batch, limit - done)
        if size <= 0:
            wq.complete_many(held)
            break
        _outcomes, held = wq.complete_and_lease_many(held, size, LEASE_MS)
    return done


def _drain_lean(wq: WorkQueue, r: redis.Redis, batch: int = 1, limit: int | None = None) -> int:
    """:func:`_drain` by bare EVALSHA of the same scripts."""
    scripts = registry()
    lease_sha, next_sha = scripts["lease"].sha1, scripts["complete_and_lease"].sha1
    complete_sha = scripts["complete"].sha1
    queue, processing = wq.keys.queue, wq.keys.processing
    size = batch if limit is None else min(batch, limit)
    reply: Any = r.evalsha(lease_sha, 2, queue, processing, LEASE_MS, secrets.token_hex(16), size, b"0", b"0")
    entries, done = reply[3:], 0
    while entries:
        done += len(entries)
        ids = [entry[0] for entry in entries]
        size = batch if limit is None else min(batch, limit - done)
        if size <= 0:
            r.evalsha(complete_sha, 2, queue, processing, b"any", *ids)
            break
        token = secrets.token_hex(16)
        reply = r.evalsha(next_sha, 2, queue, processing, LEASE_MS, token, size, b"0", b"0", b"any", *ids)
        _completed, leased = reply
        entries = leased[3:]
    return done


def drain_process(job: ProcessJob, barrier: Barrier, counter: Any) -> Drained:
    """One drain process with the shipped client."""
    _r, wq = _queue(job.url)
    barrier.wait()
    started = now()
    done = _drain(wq)
    return (started, now(), done)


def drain_process_declared(job: ProcessJob, barrier: Barrier, counter: Any) -> Drained:
    """One drain process with the shipped client and profile declared-keys."""
    _r, wq = _queue(job.url, "rwq-declared")
    barrier.wait()
    started = now()
    done = _drain(wq)
    return (started, now(), done)


def drain_process_stats(job: ProcessJob, barrier: Barrier, counter: Any) -> Drained:
    """One drain process with the shipped client on a queue whose statistics are on."""
    _r, wq = _queue(job.url, "rwq-stats")
    barrier.wait()
    started = now()
    done = _drain(wq)
    return (started, now(), done)


def drain_process_lean(job: ProcessJob, barrier: Barrier, counter: Any) -> Drained:
    """One drain process with direct EVALSHA calls."""
    r, wq = _queue(job.url, "rwq-lean")
    barrier.wait()
    started = now()
    done = _drain_lean(wq, r)
    return (started, now(), done)


def wake_consumer_proto(url: str, samples: int, conn: Connection) -> None:
    """Blocks in a pipelined BLMOVE + claim_head (prototype); reports each lease."""
    r, wq = _queue(url, "rwq-proto")
    r.script_load(CLAIM_HEAD.source)
    conn.send("ready")
    got = 0
    while got < samples:
        held = blocking_lease_pipelined(r, wq.keys, LEASE_MS, 1.0)
        if held is None:
            continue
        conn.send(now())
        wq.complete(held)
        got += 1


def wake_consumer(url: str, samples: int, conn: Connection) -> None:
    """Blocks in ``lease(block=True)`` (BLMOVE, then the claim script); reports each return."""
    _r, wq = _queue(url)
    conn.send("ready")
    for _ in range(samples):
        held = wq.lease(LEASE_MS, block=True)
        conn.send(now())
        assert held is not None
        wq.complete(held)


class Rwq(Peer):
    """The shipped client, ``rwq.WorkQueue``, used as an application would."""

    name = "rwq"
    label = "rwq"

    HOW: ClassVar[Mapping[str, str]] = {
        "enqueue_one": "WorkQueue.add(id, payload): EVALSHA add.lua (SET item NX + LPUSH id)",
        "enqueue_batch": "WorkQueue.add_many(<batch> pairs): one EVALSHA add.lua",
        "drain_one": "lease() once, then complete_and_lease(previous) per item: 1 round trip per item",
        "drain_batch": "lease_many(<batch>), then complete_and_lease_many(previous, <batch>) per batch",
        "drain_process": "each process: lease(), then complete_and_lease() until empty",
        "wake": "lease(block=True): BLMOVE, then EVALSHA claim.lua",
        "memory": "<P>:item:<id> string + the id in <P>:queue",
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.r, self.wq = _queue(self.bench.url, self.name)

    def drain_target(self) -> DrainProcess | None:
        return drain_process

    def wake_target(self) -> WakeConsumer | None:
        return wake_consumer

    def warm_up(self, payload: bytes) -> None:
        for script in registry().values():
            self.r.script_load(script.source)

    def enqueue_one(self, ids: Sequence[str], payload: bytes) -> float:
        add = self.wq.add
        with stopwatch() as elapsed:
            for item_id in ids:
                add(item_id, payload)
        return elapsed()

    def enqueue_batch(self, ids: Sequence[str], payload: bytes, batch: int) -> float:
        add_many = self.wq.add_many
        with stopwatch() as elapsed:
            for start in range(0, len(ids), batch):
                add_many([(item_id, payload) for item_id in ids[start : start + batch]])
        return elapsed()

    def fill(self, ids: Sequence[str], payload: bytes) -> None:
        for start in range(0, len(ids), 1000):
            self.wq.add_many([(item_id, payload) for item_id in ids[start : start + 1000]])

    def drain_one(self, n: int) -> float:
        with stopwatch() as elapsed:
            done = _drain(self.wq, 1, n)
        check_drained(done, n, self.name)
        return elapsed()

    def drain_batch(self, n: int, batch: int) -> float:
        with stopwatch() as elapsed:
            done = _drain(self.wq, batch, n)
        check_drained(done, n, self.name)
        return elapsed()

    def wake_add(self, item_id: str, payload: bytes) -> None:
        self.wq.add(item_id, payload)

    def close(self) -> None:
        self.r.close()


class RwqDeclared(Rwq):
    """The shipped client with profile declared-keys: what passing every key costs."""

    name = "rwq-declared"
    label = "rwq declared-keys"

    HOW: ClassVar[Mapping[str, str]] = {
        **Rwq.HOW,
        "drain_one": "as rwq, each call declaring its keys and its window (count + slack ids at the tail)",
        "drain_batch": "as rwq, each call declaring <batch> completed ids and a window of <batch> + slack",
    }

    def drain_target(self) -> DrainProcess | None:
        return drain_process_declared

    def wake_target(self) -> WakeConsumer | None:
        return None


class RwqStats(Rwq):
    """The shipped client on a queue whose statistics are on: what counting every event costs."""

    name = "rwq-stats"
    label = "rwq stats on"

    HOW: ClassVar[Mapping[str, str]] = {
        **Rwq.HOW,
        "enqueue_one": "as rwq, each add also counted (the flag's TYPE, TIME, HINCRBY)",
        "enqueue_batch": "as rwq, each add_many counted once (one HINCRBY per call)",
        "drain_one": "as rwq, each complete_and_lease counting its completion",
        "drain_batch": "as rwq, each complete_and_lease_many counting its completions once",
    }

    def drain_target(self) -> DrainProcess | None:
        return drain_process_stats

    def wake_target(self) -> WakeConsumer | None:
        return None


class RwqLean(Rwq):
    """The canonical scripts called directly: what is left when the client costs nothing."""

    name = "rwq-lean"
    label = "rwq lean shell"
    prototype = True

    HOW: ClassVar[Mapping[str, str]] = {
        "enqueue_one": "r.evalsha(add, 1, queue, 0, id, payload) with prebuilt arguments",
        "enqueue_batch": "r.evalsha(add, ...) with <batch> prebuilt pairs",
        "drain_one": "r.evalsha(complete_and_lease, previous id): 1 round trip, no plan or parsing",
        "drain_batch": "r.evalsha(complete_and_lease, <batch> ids, count=<batch>)",
        "drain_process": "each process: evalsha complete_and_lease until empty",
    }

    def drain_target(self) -> DrainProcess | None:
        return drain_process_lean

    def wake_target(self) -> WakeConsumer | None:
        return None

    def enqueue_one(self, ids: Sequence[str], payload: bytes) -> float:
        r, sha, queue = self.r, registry()["add"].sha1, self.wq.keys.queue
        with stopwatch() as elapsed:
            for item_id in ids:
                r.evalsha(sha, 1, queue, 0, item_id, payload)
        return elapsed()

    def enqueue_batch(self, ids: Sequence[str], payload: bytes, batch: int) -> float:
        r, sha, queue = self.r, registry()["add"].sha1, self.wq.keys.queue
        with stopwatch() as elapsed:
            for start in range(0, len(ids), batch):
                args = [part for item_id in ids[start : start + batch] for part in (item_id, payload)]
                r.evalsha(sha, 1, queue, 0, *args)
        return elapsed()

    def drain_one(self, n: int) -> float:
        with stopwatch() as elapsed:
            done = _drain_lean(self.wq, self.r, 1, n)
        check_drained(done, n, self.name)
        return elapsed()

    def drain_batch(self, n: int, batch: int) -> float:
        with stopwatch() as elapsed:
            done = _drain_lean(self.wq, self.r, batch, n)
        check_drained(done, n, self.name)
        return elapsed()


class RwqProto(Rwq):
    """A prototype not shipped: a blocking lease in one round trip once woken (claim_head)."""

    name = "rwq-proto"
    label = "rwq prototypes"
    prototype = True

    HOW: ClassVar[Mapping[str, str]] = {
        "wake": "one pipeline: BLMOVE + EVALSHA claim_head (prototype): 1 round trip once woken",
    }

    def drain_target(self) -> DrainProcess | None:
        return None

    def wake_target(self) -> WakeConsumer | None:
        return wake_consumer_proto

    def enqueue_one(self, ids: Sequence[str], payload: bytes) -> float:
        raise Unsupported("the prototypes only change waiting and completing")

    def enqueue_batch(self, ids: Sequence[str], payload: bytes, batch: int) -> float:
        raise Unsupported("the prototypes only change waiting and completing")

    def drain_one(self, n: int) -> float:
        raise Unsupported("complete_and_lease, the drain prototype, now ships: see rwq")

    def drain_batch(self, n: int, batch: int) -> float:
        raise Unsupported("complete_and_lease, the drain prototype, now ships: see rwq")
