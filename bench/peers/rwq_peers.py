"""rwq three ways: the shipped client, a lean shell over the same scripts, and the prototypes.

``rwq`` is the product (``WorkQueue``). ``rwq-lean`` calls EVALSHA on the canonical scripts with
prebuilt arguments and no plan, validation or result objects: the gap between the two is the
client's own overhead. ``rwq-proto`` drives the ``complete_lease`` prototype (:mod:`bench.proto`)
through a shell like the shipped one: the gap to ``rwq`` is the round trip it saves.
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
from bench.proto import (
    CLAIM_HEAD,
    blocking_lease_pipelined,
    complete_and_lease,
    complete_lease_script,
    drive,
)
from rwq import Lease, WorkQueue
from rwq.protocol.scripts import registry

PREFIXES = {"rwq": "rwq", "rwq-lean": "rwql", "rwq-proto": "rwqp"}
"""Each variant has its own queue: interleaved runs keep all of them in Redis at once."""


def _queue(url: str, peer: str = "rwq") -> tuple[redis.Redis, WorkQueue]:
    r = redis.Redis.from_url(url)
    wq = WorkQueue(r, PREFIXES[peer])
    wq.counts()  # the one-time server check
    return r, wq


def _drain(wq: WorkQueue, limit: int | None = None) -> int:
    done = 0
    while limit is None or done < limit:
        held = wq.lease(LEASE_MS)
        if held is None:
            break
        wq.complete(held)
        done += 1
    return done


def _drain_lean(wq: WorkQueue, r: redis.Redis, batch: int = 1, limit: int | None = None) -> int:
    lease_sha, complete_sha = registry()["lease"].sha1, registry()["complete"].sha1
    queue, processing = wq.keys.queue, wq.keys.processing
    done = 0
    while limit is None or done < limit:
        size = batch if limit is None else min(batch, limit - done)
        token = secrets.token_hex(16).encode()
        reply: Any = r.evalsha(lease_sha, 2, queue, processing, LEASE_MS, token, size, b"0")
        entries = reply[3:]
        if not entries:
            break
        r.evalsha(complete_sha, 2, queue, processing, b"any", *(entry[0] for entry in entries))
        done += len(entries)
    return done


def _drain_proto(
    r: redis.Redis, wq: WorkQueue, held: list[Lease], batch: int = 1, limit: int | None = None
) -> tuple[int, list[Lease]]:
    """complete_and_lease until ``limit`` leased (or the queue is empty); the leases still held."""
    done = 0
    while limit is None or done < limit:
        size = batch if limit is None else min(batch, limit - done)
        _outcomes, held = drive(r, complete_and_lease(wq.keys, held, LEASE_MS, size))
        if not held:
            break
        done += len(held)
    return done, held


def drain_process(job: ProcessJob, barrier: Barrier, counter: Any) -> Drained:
    """One drain process with the shipped client."""
    _r, wq = _queue(job.url)
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


def drain_process_proto(job: ProcessJob, barrier: Barrier, counter: Any) -> Drained:
    """One drain process with the complete_lease prototype."""
    r, wq = _queue(job.url, "rwq-proto")
    r.script_load(complete_lease_script().source)
    barrier.wait()
    started = now()
    done, _held = _drain_proto(r, wq, [])
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
        "drain_one": "WorkQueue.lease() + WorkQueue.complete(lease): 2 round trips",
        "drain_batch": "WorkQueue.lease_many(<batch>) + complete_many(leases): 2 round trips per batch",
        "drain_process": "each process: lease() + complete() until empty",
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
        self.r.script_load(complete_lease_script().source)

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
            done = _drain(self.wq, n)
        check_drained(done, n, self.name)
        return elapsed()

    def drain_batch(self, n: int, batch: int) -> float:
        wq, done = self.wq, 0
        with stopwatch() as elapsed:
            while done < n:
                leases = wq.lease_many(min(batch, n - done), LEASE_MS)
                if not leases:
                    break
                wq.complete_many(leases)
                done += len(leases)
        check_drained(done, n, self.name)
        return elapsed()

    def wake_add(self, item_id: str, payload: bytes) -> None:
        self.wq.add(item_id, payload)

    def close(self) -> None:
        self.r.close()


class RwqLean(Rwq):
    """The canonical scripts called directly: what is left when the client costs nothing."""

    name = "rwq-lean"
    label = "rwq lean shell"
    prototype = True

    HOW: ClassVar[Mapping[str, str]] = {
        "enqueue_one": "r.evalsha(add, 1, queue, 0, id, payload) with prebuilt arguments",
        "enqueue_batch": "r.evalsha(add, ...) with <batch> prebuilt pairs",
        "drain_one": "r.evalsha(lease) + r.evalsha(complete): 2 round trips, no plan or parsing",
        "drain_batch": "r.evalsha(lease, count=<batch>) + r.evalsha(complete, <batch> ids)",
        "drain_process": "each process: evalsha lease + evalsha complete until empty",
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
    """The complete_lease prototype: complete the previous item and lease the next in one call."""

    name = "rwq-proto"
    label = "rwq + complete_lease"
    prototype = True

    HOW: ClassVar[Mapping[str, str]] = {
        "drain_one": "complete_and_lease(previous, count=1): 1 round trip per item (prototype script)",
        "drain_batch": "complete_and_lease(previous batch, count=<batch>): 1 round trip per batch",
        "drain_process": "each process: complete_and_lease until empty",
        "wake": "one pipeline: BLMOVE + EVALSHA claim_head (prototype): 1 round trip once woken",
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.held: list[Lease] = []

    def fill(self, ids: Sequence[str], payload: bytes) -> None:
        self.held = []  # the database was just emptied
        super().fill(ids, payload)

    def drain_target(self) -> DrainProcess | None:
        return drain_process_proto

    def wake_target(self) -> WakeConsumer | None:
        return wake_consumer_proto

    def enqueue_one(self, ids: Sequence[str], payload: bytes) -> float:
        raise Unsupported("the prototype only changes draining")

    def enqueue_batch(self, ids: Sequence[str], payload: bytes, batch: int) -> float:
        raise Unsupported("the prototype only changes draining")

    def drain_one(self, n: int) -> float:
        with stopwatch() as elapsed:
            done, self.held = _drain_proto(self.r, self.wq, self.held, 1, n)
        check_drained(done, n, self.name)
        return elapsed()

    def drain_batch(self, n: int, batch: int) -> float:
        with stopwatch() as elapsed:
            done, self.held = _drain_proto(self.r, self.wq, self.held, batch, n)
        check_drained(done, n, self.name)
        return elapsed()
