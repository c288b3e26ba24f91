"""A hypothesis state machine: the client against a small executable model of RWQ/1 core.

The model keeps the two lists exactly (head first, as ``LRANGE 0 -1`` shows them), the items,
and both generations of lease keys with their tokens and expiry times. Rules drive the client
(sync ``WorkQueue``, with and without the legacy lease key) and a few foreign actors (a stray
duplicate or ghost entry, an orphaned item, a redis-work-queue G1 ``complete``); time moves only
through the frozen-clock server. After every step the whole logical state is read back from
Redis and compared with the model: lists, item keys and payloads, lease keys, tokens and TTLs,
and that no other key exists.

The model also covers the ``retry`` and ``delay`` profiles (SPEC §15, §16): the queue's retry
policy (small ``max_attempts``, fixed or exponential backoff, no jitter so delays are exact),
attempt numbers, ``fail`` (retry after the backoff, or dead-letter), dead-lettering at lease time
(RWQ-RETRY-003) and by ``light_clean`` (RWQ-RETRY-007), delayed adds and releases, promotion of
due delayed items by ``lease`` and ``light_clean``, ``complete`` cancelling a delayed item, and
``dead_items`` / ``dead_item`` / ``requeue_dead`` / ``purge_dead``; the invariant reads the profile
keys too (``delayed``, ``delayed:data``, ``attempts``, ``dead``, ``dead:data``, ``dead:info``,
``policy``).

Step sizes are chosen so that no lease ever expires within a few ms of "now" (the frozen clock is
exact to about 1 ms), so the model never has to guess on which side of an expiry Redis is. Delays
and backoffs are 13 ms (mod 100) off the clock's 100 ms grid, so no due time lands on "now"
either, and dead-letter retention ages are 50 ms off it.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import ClassVar, cast

import hypothesis.strategies as st
import pytest
import redis
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from rwq import Counts, DeadItem, FailOutcome, FailResult, Lease, LeaseLost, Outcome, RetryPolicy, WorkQueue
from rwq.conformance.redis_server import RedisServer

IDS = st.sampled_from(["a", "b", "c", "é"])
PAYLOADS = st.binary(max_size=3)
LEASE_MS = st.sampled_from([1000, 3000])
ADVANCE_MS = st.sampled_from([700, 2500])  # sums never land within 100 ms of a lease's end
TTL_SLACK_MS = 3
G1_LEASE_MS = 2000  # G1 writes SETEX in seconds
DELAYS_MS = st.sampled_from([0, 0, 0, 1013, 2513])  # off the 100 ms grid of the clock
POLICIES = st.builds(
    RetryPolicy,
    max_attempts=st.sampled_from([1, 1, 2, 3]),
    backoff=st.sampled_from(["fixed", "exponential"]),
    base_ms=st.sampled_from([0, 613, 1013]),  # 2x and 4x stay off the grid too
    cap_ms=st.sampled_from([0, 1513]),
    jitter_pct=st.just(0),
    dead_max_count=st.sampled_from([0, 0, 2]),
    dead_max_age_ms=st.sampled_from([0, 0, 4050]),
)

# Operations and their weights (an operation listed twice is drawn twice as often; the first
# entry is drawn a little more often than the others).
OPERATIONS = (
    *("lease", "renew", "complete", "release", "add", "advance", "light_clean"),
    *("lease", "renew", "complete", "release", "advance", "light_clean"),
    *("stray_entry", "orphan", "g1_lease", "g1_complete", "g2_light_clean", "deep_clean"),
    *(
        "fail",
        "fail",
        "fail",
        "set_policy",
        "dead_items",
        "requeue_dead",
        "purge_dead",
        "advance",
        "light_clean",
    ),
)
PROFILE_KEYS = ("delayed", "delayed_data", "attempts", "dead", "dead_data", "dead_info")
NEEDS_A_LEASE = frozenset({"renew", "complete", "release", "fail"})


def lrem(entries: list[str], count: int, value: str) -> int:
    """Redis LREM on a list held head first."""
    positions = [n for n, entry in enumerate(entries) if entry == value]
    if count > 0:
        positions = positions[:count]
    elif count < 0:
        positions = positions[::-1][:-count]
    for n in sorted(positions, reverse=True):
        del entries[n]
    return len(positions)


@dataclass
class Held:
    token: str
    expires: int


@dataclass
class Dead:
    at: int
    data: bytes
    reason: str
    attempts: int


@dataclass
class Model:
    now: int = 0
    items: dict[str, bytes] = field(default_factory=dict)
    queue: list[str] = field(default_factory=list)  # head (newest) first
    processing: list[str] = field(default_factory=list)  # head (latest lease) first
    leases: dict[str, Held] = field(default_factory=dict)
    legacy: dict[str, Held] = field(default_factory=dict)
    policy: RetryPolicy | None = None
    attempts: dict[str, int] = field(default_factory=dict)
    delayed: dict[str, tuple[int, bytes]] = field(default_factory=dict)  # id -> (due, payload)
    dead: dict[str, Dead] = field(default_factory=dict)

    def live(self, keys: dict[str, Held]) -> dict[str, Held]:
        return {item_id: held for item_id, held in keys.items() if held.expires > self.now}

    def held(self, item_id: str) -> bool:
        return item_id in self.live(self.leases) or item_id in self.live(self.legacy)

    def token_of(self, item_id: str) -> str | None:
        held = self.live(self.leases).get(item_id)
        return held.token if held else None

    def max_attempts(self) -> int:
        return self.policy.max_attempts if self.policy else 0

    def bury(self, item_id: str, reason: str, attempts: int) -> None:
        """Dead-letter a live item (RWQ-RETRY-008); the caller handles its list entries."""
        self.dead[item_id] = Dead(self.now, self.items.pop(item_id), reason, attempts)
        self.attempts.pop(item_id, None)

    def add(self, item_id: str, data: bytes, delay_ms: int = 0) -> bool:
        if item_id in self.delayed or item_id in self.dead:
            return False
        if delay_ms > 0:
            if item_id in self.items:
                return False
            self.delayed[item_id] = (self.now + delay_ms, data)
            return True
        if item_id in self.items:
            return False
        self.items[item_id] = data
        self.leases.pop(item_id, None)  # RWQ-ADD-006: stale lease keys of an earlier item go
        self.legacy.pop(item_id, None)
        self.queue.insert(0, item_id)
        return True

    def promote(self, limit: int) -> int:
        """Due delayed items, in due-time order (ties by id), back to the queue (RWQ-DELAY-004)."""
        due = sorted(
            ((when, item_id.encode()) for item_id, (when, _) in self.delayed.items() if when <= self.now)
        )[:limit]
        promoted = 0
        for _, raw in due:
            item_id = raw.decode()
            _, data = self.delayed.pop(item_id)
            if item_id not in self.items:
                self.items[item_id] = data
                self.queue.insert(0, item_id)
                promoted += 1
        return promoted

    def lease(self, count: int) -> list[tuple[str, bytes, int]]:
        """Ids the lease script grants, in order, with attempt numbers (the caller sets their
        lease keys)."""
        self.promote(100)
        granted: list[tuple[str, bytes, int]] = []
        while len(granted) < count and self.queue:
            item_id = self.queue.pop()
            self.processing.insert(0, item_id)
            held = self.held(item_id) or item_id in (granted_id for granted_id, _, _ in granted)
            if item_id in self.items and not held:
                attempt = 0
                if self.policy is not None:
                    attempt = self.attempts[item_id] = self.attempts.get(item_id, 0) + 1
                if 0 < self.max_attempts() < attempt:
                    lrem(self.processing, 1, item_id)
                    self.bury(item_id, "max attempts exceeded", attempt - 1)
                else:
                    granted.append((item_id, self.items[item_id], attempt))
            elif item_id not in self.items or self.processing.count(item_id) >= 2:
                # a ghost, or a duplicate of a held item; a held item's only entry stays
                lrem(self.processing, 1, item_id)
        return granted

    def grant(self, item_id: str, token: str, lease_ms: int, legacy: bool) -> None:
        self.leases[item_id] = Held(token, self.now + lease_ms)
        if legacy:
            self.legacy[item_id] = Held(token, self.now + lease_ms)

    def renew(self, item_id: str, token: str, lease_ms: int, legacy: bool) -> bool:
        if self.token_of(item_id) != token or item_id not in self.items:
            return False
        self.grant(item_id, token, lease_ms, legacy)
        return True

    def complete(self, item_id: str, token: str | None) -> Outcome:
        """``token`` None: mode "any"; else mode "owner"."""
        if token is not None and self.token_of(item_id) != token:
            return Outcome.LEASE_LOST
        deleted = self.items.pop(item_id, None) is not None
        unlisted = lrem(self.processing, -1, item_id) == 0
        self.leases.pop(item_id, None)
        self.legacy.pop(item_id, None)
        if deleted and unlisted:
            lrem(self.queue, 1, item_id)
        self.attempts.pop(item_id, None)
        if not deleted and token is None and self.delayed.pop(item_id, None) is not None:
            deleted = True  # RWQ-DELAY-006: a delayed item is cancelled
        return Outcome.DONE if deleted else Outcome.GONE

    def release(self, item_id: str, token: str, delay_ms: int = 0) -> Outcome:
        if item_id in self.items and self.token_of(item_id) != token:
            return Outcome.LEASE_LOST
        self.leases.pop(item_id, None)
        self.legacy.pop(item_id, None)
        lrem(self.processing, -1, item_id)
        if item_id not in self.items:
            return Outcome.GONE
        if delay_ms > 0:
            self.delayed[item_id] = (self.now + delay_ms, self.items.pop(item_id))
        else:
            self.queue.insert(0, item_id)
        return Outcome.DONE

    def backoff(self, failures: int) -> int:
        policy = self.policy
        if policy is None:
            return 0
        delay = policy.base_ms
        if policy.backoff == "exponential":
            delay = delay * 2 ** min(max(failures - 1, 0), 40)
            if policy.cap_ms > 0:
                delay = min(delay, policy.cap_ms)
        return min(delay, 31_536_000_000)  # jitter_pct is 0

    def fail(self, item_id: str, token: str, reason: str) -> FailResult | None:
        """None: the caller does not hold the lease (LeaseLost)."""
        if item_id in self.items and self.token_of(item_id) != token:
            return None
        attempts = self.attempts.get(item_id, 0)
        delay = self.backoff(attempts)
        self.leases.pop(item_id, None)
        self.legacy.pop(item_id, None)
        lrem(self.processing, -1, item_id)
        if item_id not in self.items:
            return FailResult(FailOutcome.GONE, 0)
        if 0 < self.max_attempts() <= attempts:
            self.bury(item_id, reason, attempts)
            self.trim_dead()
            return FailResult(FailOutcome.DEAD, 0)
        if delay <= 0:
            self.queue.insert(0, item_id)
            return FailResult(FailOutcome.RETRY, 0)
        self.delayed[item_id] = (self.now + delay, self.items.pop(item_id))
        return FailResult(FailOutcome.RETRY, delay)

    def light_clean(self, chunk: int) -> tuple[list[str], int, list[str], int]:
        """The client's chunked walk, script call by script call (each one promotes first)."""
        requeued: list[str] = []
        buried: list[str] = []
        dropped = promoted = cursor = 0
        while True:
            promoted += self.promote(chunk)
            n = len(self.processing)
            # LRANGE processing -(cursor + chunk) -(cursor + 1), head first
            ids = self.processing[max(n - cursor - chunk, 0) : max(n - cursor, 0)]
            kept = 0
            for item_id in reversed(ids):  # oldest first
                if self.held(item_id):
                    kept += 1
                    continue
                lrem(self.processing, -1, item_id)
                if item_id not in self.items:
                    dropped += 1
                elif 0 < self.max_attempts() <= self.attempts.get(item_id, 0):
                    self.bury(item_id, "lease expired", self.attempts.get(item_id, 0))
                    buried.append(item_id)
                else:
                    self.queue.insert(0, item_id)
                    requeued.append(item_id)
            if len(ids) != chunk:
                break
            cursor += kept
        self.trim_dead()
        return requeued, dropped, buried, promoted

    def trim_dead(self) -> None:
        """The client's ``dead trim`` (RWQ-RETRY-011): by age, then by count, oldest first."""
        policy = self.policy
        if policy is None:
            return
        if policy.dead_max_age_ms > 0:
            cutoff = self.now - policy.dead_max_age_ms
            for item_id in [item_id for item_id, dead in self.dead.items() if dead.at < cutoff]:
                del self.dead[item_id]
        excess = len(self.dead) - policy.dead_max_count if policy.dead_max_count > 0 else 0
        if excess > 0:
            oldest = sorted(self.dead, key=lambda item_id: (self.dead[item_id].at, item_id.encode()))
            for item_id in oldest[:excess]:
                del self.dead[item_id]

    def dead_list(self, t0: int) -> list[DeadItem]:
        newest = sorted(
            self.dead, key=lambda item_id: (self.dead[item_id].at, item_id.encode()), reverse=True
        )
        return [
            DeadItem(
                item_id, t0 + self.dead[item_id].at, self.dead[item_id].reason, self.dead[item_id].attempts
            )
            for item_id in newest
        ]

    def requeue_dead(self, item_id: str) -> bool:
        if item_id not in self.dead or item_id in self.delayed or item_id in self.items:
            return False
        self.items[item_id] = self.dead.pop(item_id).data
        self.queue.insert(0, item_id)
        self.attempts.pop(item_id, None)
        return True

    def purge_dead(self, item_id: str) -> bool:
        return self.dead.pop(item_id, None) is not None

    def deep_clean_ghosts(self) -> int:
        dropped = 0
        for entries in (self.queue, self.processing):
            for item_id in list(entries):
                if item_id not in self.items:
                    dropped += lrem(entries, 1, item_id)
        return dropped

    def orphans(self) -> set[str]:
        listed = set(self.queue) | set(self.processing)
        return {item_id for item_id in self.items if item_id not in listed and not self.held(item_id)}


class QueueMachine(RuleBasedStateMachine):
    # The frozen-clock server and a client of it; the test binds them in a subclass.
    r: ClassVar[redis.Redis]
    server: ClassVar[RedisServer]

    def __init__(self) -> None:
        super().__init__()
        self.prefix = f"model:{{{uuid.uuid4().hex[:12]}}}"  # a fresh queue for every example
        self.plain = WorkQueue(self.r, self.prefix)
        self.legacy_q = WorkQueue(self.r, self.prefix, legacy_lease_key=True)
        self.model = Model()
        self.handed: list[Lease] = []  # every lease the client returned, held or stale
        self.t0 = 0

    def q(self, legacy: bool) -> WorkQueue:
        return self.legacy_q if legacy else self.plain

    def pick(self, data: st.DataObject) -> Lease:
        """A lease handed out earlier: one still held, half of the time when there is one."""
        held = [lease for lease in self.handed if self.model.token_of(lease.id) == lease.token]
        if held and data.draw(st.booleans(), label="held") is True:
            return data.draw(st.sampled_from(held), label="lease")
        return data.draw(st.sampled_from(self.handed), label="lease")

    def picks(self, data: st.DataObject) -> list[Lease]:
        return [self.pick(data) for _ in range(data.draw(st.integers(1, 3), label="batch"))]

    @initialize(
        items=st.lists(st.tuples(IDS, PAYLOADS), min_size=2, max_size=5),
        policy=st.one_of(st.none(), POLICIES, POLICIES),
    )
    def start(self, items: list[tuple[str, bytes]], policy: RetryPolicy | None) -> None:
        assert self.r.keys(f"{self.prefix}*") == []
        seconds, micros = self.r.time()
        self.t0 = seconds * 1000 + micros // 1000  # the server's ms clock at model time 0
        expected = [self.model.add(item_id, data) for item_id, data in items]
        assert self.plain.add_many(items) == expected
        if policy is not None:  # most runs exercise the retry profile from the start
            self.plain.set_retry_policy(policy)
            self.model.policy = policy

    def teardown(self) -> None:
        """Leave an empty database: deep_clean's SCAN walks every key, not just this queue's."""
        stale = self.r.keys(f"{self.prefix}:*")
        if stale:
            self.r.delete(*stale)

    @rule(data=st.data())
    def step(self, data: st.DataObject) -> None:
        """One operation, drawn with the weights of OPERATIONS.

        A single rule with explicit weights, rather than one rule per operation: hypothesis
        orders rules by their number of arguments and favours the first, which starved the
        operations with more arguments (lease, renew) in favour of the argument-less cleans.
        """
        operation = data.draw(st.sampled_from(OPERATIONS), label="operation")
        if operation in NEEDS_A_LEASE and not self.handed:
            operation = "lease"
        getattr(self, f"op_{operation}")(data)

    # ------------------------------------------------------------------ client operations

    def op_add(self, data: st.DataObject) -> None:
        items = data.draw(st.lists(st.tuples(IDS, PAYLOADS), min_size=1, max_size=4), label="items")
        delay_ms = data.draw(DELAYS_MS, label="delay_ms")
        expected = [self.model.add(item_id, payload, delay_ms) for item_id, payload in items]
        if len(items) == 1:
            assert self.plain.add(*items[0], delay_ms=delay_ms) == expected[0]
        else:
            assert self.plain.add_many(items, delay_ms=delay_ms) == expected

    def op_lease(self, data: st.DataObject) -> None:
        count = data.draw(st.sampled_from([1, 1, 2, 4]), label="count")
        lease_ms = data.draw(LEASE_MS, label="lease_ms")
        legacy = data.draw(st.booleans(), label="legacy")
        granted = self.model.lease(count)
        if count == 1:
            one = self.q(legacy).lease(lease_ms)
            got = [] if one is None else [one]
        else:
            got = self.q(legacy).lease_many(count=count, lease_ms=lease_ms)
        assert [(held.id, held.data, held.attempt) for held in got] == granted
        for held in got:
            self.model.grant(held.id, held.token, lease_ms, legacy)
        self.handed += got

    def op_renew(self, data: st.DataObject) -> None:
        batch = self.picks(data)
        lease_ms = data.draw(LEASE_MS, label="lease_ms")
        legacy = data.draw(st.booleans(), label="legacy")
        expected = [self.model.renew(held.id, held.token, lease_ms, legacy) for held in batch]
        if len(batch) == 1:
            assert self.q(legacy).renew(batch[0], lease_ms) == expected[0]
        else:
            assert self.q(legacy).renew_many(batch, lease_ms) == expected

    def op_complete(self, data: st.DataObject) -> None:
        require_lease = data.draw(st.booleans(), label="require_lease")
        batch: list[Lease | str] = list(self.picks(data))
        if not require_lease and data.draw(st.booleans(), label="and an id") is True:
            batch.insert(data.draw(st.integers(0, len(batch)), label="at"), data.draw(IDS, label="id"))
        expected = [
            self.model.complete(
                item if isinstance(item, str) else item.id,
                item.token if require_lease and isinstance(item, Lease) else None,
            )
            for item in batch
        ]
        if len(batch) > 1:
            assert self.plain.complete_many(batch, require_lease=require_lease) == expected
        elif expected[0] is Outcome.LEASE_LOST:
            with pytest.raises(LeaseLost):
                self.plain.complete(batch[0], require_lease=require_lease)
        else:
            assert self.plain.complete(batch[0], require_lease=require_lease) == (expected[0] is Outcome.DONE)

    def op_release(self, data: st.DataObject) -> None:
        batch = self.picks(data)
        delay_ms = data.draw(DELAYS_MS, label="delay_ms")
        expected = [self.model.release(held.id, held.token, delay_ms) for held in batch]
        if len(batch) > 1:
            assert self.plain.release_many(batch, delay_ms=delay_ms) == expected
        elif expected[0] is Outcome.LEASE_LOST:
            with pytest.raises(LeaseLost):
                self.plain.release(batch[0], delay_ms=delay_ms)
        else:
            assert self.plain.release(batch[0], delay_ms=delay_ms) == (expected[0] is Outcome.DONE)

    def op_fail(self, data: st.DataObject) -> None:
        held = self.pick(data)
        reason = data.draw(st.sampled_from(["", "boom", "ü"]), label="reason")
        expected = self.model.fail(held.id, held.token, reason)
        if expected is None:
            with pytest.raises(LeaseLost):
                self.plain.fail(held, reason)
        else:
            assert self.plain.fail(held, reason) == expected

    def op_set_policy(self, data: st.DataObject) -> None:
        policy = data.draw(st.one_of(st.none(), POLICIES, POLICIES, POLICIES), label="policy")
        self.plain.set_retry_policy(policy)
        self.model.policy = policy
        assert self.plain.retry_policy() == policy

    def op_dead_items(self, data: st.DataObject) -> None:
        expected = self.model.dead_list(self.t0)
        offset = data.draw(st.integers(0, 2), label="offset")
        count = data.draw(st.sampled_from([1, 100]), label="count")
        assert self.plain.dead_items(offset=offset, count=count) == expected[offset : offset + count]
        item_id = data.draw(IDS, label="id")
        one = self.model.dead.get(item_id)
        got = self.plain.dead_item(item_id)
        if one is None:
            assert got is None
        else:
            assert got == DeadItem(item_id, self.t0 + one.at, one.reason, one.attempts, one.data)

    def dead_ids(self, data: st.DataObject) -> list[str]:
        known = sorted(self.model.dead)
        pick_dead = bool(known) and data.draw(st.booleans(), label="a dead id") is True
        some = st.sampled_from(known) if pick_dead else IDS
        ids: list[str] = data.draw(st.lists(some, min_size=1, max_size=3), label="ids")
        return ids

    def op_requeue_dead(self, data: st.DataObject) -> None:
        ids = self.dead_ids(data)
        expected = [self.model.requeue_dead(item_id) for item_id in ids]
        assert self.plain.requeue_dead(ids) == expected

    def op_purge_dead(self, data: st.DataObject) -> None:
        ids = self.dead_ids(data)
        expected = [self.model.purge_dead(item_id) for item_id in ids]
        assert self.plain.purge_dead(ids) == expected

    def op_light_clean(self, data: st.DataObject) -> None:
        chunk = data.draw(st.sampled_from([1, 2, 100]), label="chunk")
        requeued, dropped, buried, promoted = self.model.light_clean(chunk)
        report = self.plain.light_clean(chunk=chunk)
        assert list(report.requeued) == requeued
        assert report.dropped == dropped
        assert list(report.dead) == buried
        assert report.promoted == promoted

    def op_deep_clean(self, data: st.DataObject) -> None:
        dropped = self.model.deep_clean_ghosts()
        orphans = self.model.orphans()
        report = self.plain.deep_clean(chunk=data.draw(st.sampled_from([2, 1000]), label="chunk"))
        assert report.dropped == dropped
        assert sorted(report.requeued) == sorted(orphans)
        for item_id in report.requeued:  # pushed in the order the SCAN found them
            self.model.queue.insert(0, item_id)

    def op_advance(self, data: st.DataObject) -> None:
        ms = data.draw(ADVANCE_MS, label="ms")
        self.server.advance(ms)
        self.model.now += ms

    # ------------------------------------------------------------------ foreign actors

    def op_stray_entry(self, data: st.DataObject) -> None:
        """Someone pushes an id: a ghost if no item has it, else a duplicate entry (often of an
        id that is leased)."""
        if self.handed and data.draw(st.booleans(), label="of a leased id") is True:
            item_id = self.pick(data).id
        else:
            item_id = data.draw(IDS, label="id")
        self.r.lpush(self.plain.keys.queue, item_id)
        self.model.queue.insert(0, item_id)

    def op_orphan(self, data: st.DataObject) -> None:
        """An item key in no list: an older client's add that died halfway."""
        item_id = data.draw(IDS, label="id")
        if item_id not in self.model.items:
            payload = data.draw(PAYLOADS, label="payload")
            self.r.set(self.plain.keys.item(item_id), payload)
            self.model.items[item_id] = payload

    # redis-work-queue's own operations, command by command as its clients send them (not
    # atomic, but nothing runs concurrently here).

    def op_g1_lease(self, data: st.DataObject) -> None:
        """PyPI 0.1.5 lease: RPOPLPUSH, GET, SETEX of the legacy key; no ghost or lease check."""
        keys, model = self.plain.keys, self.model
        moved = self.r.rpoplpush(keys.queue, keys.processing)
        if not model.queue:
            assert moved is None
            return
        moved_id = model.queue.pop()
        assert moved == moved_id.encode()
        model.processing.insert(0, moved_id)
        self.r.set(keys.legacy_lease(moved_id), "g1-session", px=G1_LEASE_MS)
        model.legacy[moved_id] = Held("g1-session", model.now + G1_LEASE_MS)

    def op_g1_complete(self, data: st.DataObject) -> None:
        """PyPI 0.1.5 complete: LREM 0; only if that removed an entry, DEL the data and the legacy
        lease (never ``:lease:``, which stays behind)."""
        keys, model = self.plain.keys, self.model
        if self.handed and data.draw(st.booleans(), label="a leased id") is True:
            item_id = self.pick(data).id
        else:
            item_id = data.draw(IDS, label="id")
        removed = self.r.lrem(keys.processing, 0, item_id)
        if removed:
            self.r.delete(keys.item(item_id), keys.legacy_lease(item_id))
        assert removed == lrem(model.processing, 0, item_id)
        if removed:
            model.items.pop(item_id, None)
            model.legacy.pop(item_id, None)

    def op_g2_light_clean(self, data: st.DataObject) -> None:
        """Go/Rust/.NET 0.3 light clean: LRANGE; for each id with no ``:lease:`` key (the legacy
        key is not checked), LREM 0, then LPUSH if the item exists."""
        keys, model = self.plain.keys, self.model
        for raw in cast(list[bytes], self.r.lrange(keys.processing, 0, -1)):
            if self.r.exists(keys.queue.replace(b":queue", b":lease:") + raw):
                continue
            exists = self.r.exists(keys.queue.replace(b":queue", b":item:") + raw)
            self.r.lrem(keys.processing, 0, raw)  # type: ignore[arg-type]
            if exists:
                self.r.lpush(keys.queue, raw)
        for item_id in list(model.processing):
            if item_id in model.live(model.leases):
                continue
            lrem(model.processing, 0, item_id)
            if item_id in model.items:
                model.queue.insert(0, item_id)

    # ------------------------------------------------------------------ the whole state

    @invariant()
    def redis_matches_model(self) -> None:
        keys, model = self.plain.keys, self.model
        expected: dict[bytes, bytes] = {keys.item(item_id): data for item_id, data in model.items.items()}
        ttls: dict[bytes, int] = {}
        for make_key, leases in (
            (keys.lease, model.live(model.leases)),
            (keys.legacy_lease, model.live(model.legacy)),
        ):
            for item_id, held in leases.items():
                expected[make_key(item_id)] = held.token.encode()
                ttls[make_key(item_id)] = held.expires - model.now
        base = keys.queue[: -len(b"queue")]
        profile_key = {name: base + name.replace("_", ":").encode() for name in PROFILE_KEYS}
        pipe = self.r.pipeline(transaction=True)  # one consistent reading of the whole queue
        pipe.lrange(keys.queue, 0, -1)
        pipe.lrange(keys.processing, 0, -1)
        pipe.keys(f"{self.prefix}:*")
        pipe.zrange(profile_key["delayed"], 0, -1, withscores=True)
        pipe.hgetall(profile_key["delayed_data"])
        pipe.hgetall(profile_key["attempts"])
        pipe.zrange(profile_key["dead"], 0, -1, withscores=True)
        pipe.hgetall(profile_key["dead_data"])
        pipe.hgetall(profile_key["dead_info"])
        pipe.hgetall(keys.policy)
        for key in expected:
            pipe.get(key)
            pipe.pttl(key)
        (
            queue,
            processing,
            found,
            delayed,
            delayed_data,
            attempts,
            dead,
            dead_data,
            dead_info,
            policy,
            *values,
        ) = pipe.execute()
        b = str.encode
        assert dict(delayed) == {b(item_id): self.t0 + due for item_id, (due, _) in model.delayed.items()}
        assert delayed_data == {b(item_id): payload for item_id, (_, payload) in model.delayed.items()}
        assert attempts == {b(item_id): b(str(n)) for item_id, n in model.attempts.items()}
        assert dict(dead) == {b(item_id): self.t0 + gone.at for item_id, gone in model.dead.items()}
        assert dead_data == {b(item_id): gone.data for item_id, gone in model.dead.items()}
        assert {raw: json.loads(info) for raw, info in dead_info.items()} == {
            b(item_id): {"reason": gone.reason, "attempts": gone.attempts}
            for item_id, gone in model.dead.items()
        }
        fields = (
            "max_attempts",
            "backoff",
            "base_ms",
            "cap_ms",
            "jitter_pct",
            "dead_max_count",
            "dead_max_age_ms",
        )
        assert policy == (
            {b(name): b(str(value)) for name, value in zip(fields, model.policy.fields(), strict=True)}
            if model.policy
            else {}
        )
        profile = {
            profile_key["delayed"]: model.delayed,
            profile_key["delayed_data"]: model.delayed,
            profile_key["attempts"]: model.attempts,
            profile_key["dead"]: model.dead,
            profile_key["dead_data"]: model.dead,
            profile_key["dead_info"]: model.dead,
            keys.policy: model.policy,
        }
        assert [raw.decode() for raw in queue] == model.queue
        assert [raw.decode() for raw in processing] == model.processing
        listed = {key for key, entries in ((keys.queue, queue), (keys.processing, processing)) if entries}
        assert set(found) == set(expected) | listed | {key for key, held in profile.items() if held}
        for (key, value), got, ttl in zip(expected.items(), values[::2], values[1::2], strict=True):
            assert got == value, key
            if key in ttls:
                assert abs(ttl - ttls[key]) <= TTL_SLACK_MS, key
            else:
                assert ttl == -1, key  # item keys never expire
        assert self.plain.counts() == Counts(
            len(model.queue), len(model.processing), len(model.delayed), len(model.dead)
        )


def test_client_matches_model(fr: redis.Redis, frozen_server: RedisServer) -> None:
    class OnFrozenServer(QueueMachine):
        r = fr
        server = frozen_server

    run_state_machine_as_test(
        OnFrozenServer,
        settings=settings(
            max_examples=60,
            stateful_step_count=30,
            deadline=None,
            derandomize=True,
            database=None,
            # Shrinking replays hundreds of runs against Redis and would outlast the test timeout;
            # a failing run (at most 30 steps) is printed as it was found.
            phases=(Phase.explicit, Phase.generate),
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )


def test_model_light_clean_dead_letters(fr: redis.Redis, frozen_server: RedisServer) -> None:
    """RWQ-RETRY-007 through the model, step by step (the random runs reach it rarely)."""
    machine = type("Pinned", (QueueMachine,), {"r": fr, "server": frozen_server})()
    policy = RetryPolicy(
        max_attempts=1, backoff="fixed", base_ms=0, cap_ms=0, dead_max_count=0, dead_max_age_ms=0
    )
    machine.start(items=[("a", b"1"), ("b", b"2")], policy=policy)
    lease = machine.plain.lease(1000)
    assert lease is not None
    assert machine.model.lease(1) == [(lease.id, lease.data, lease.attempt)]
    machine.model.grant(lease.id, lease.token, 1000, False)
    machine.redis_matches_model()
    frozen_server.advance(2500)
    machine.model.now += 2500
    assert machine.model.light_clean(2) == ([], 0, ["a"], 0)
    assert machine.plain.light_clean(chunk=2).dead == ("a",)
    machine.redis_matches_model()
    machine.teardown()
