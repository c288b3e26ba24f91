"""One logical queue over N RWQ/1 queues (docs/design/sharded.md): routing, rotation and merging.

Shard ``i`` of queue ``P`` is the ordinary RWQ/1 queue whose prefix is ``{P#i}``, in the hash slot
of ``P#i``, so a Redis Cluster spreads the shards over its masters while every script call still
touches one slot. Ids are routed by CRC-32 (ISO-HDLC, ``zlib.crc32``) modulo N, so an id always
lands on the same shard and ``add`` stays idempotent. This module is pure: each sharded
operation is a plan that yields :class:`OnShard` steps (one shard's queue method and its
arguments) and gets their results back, so that the sync and asyncio shells of
:mod:`rwq.sharded` share every rule. Every argument is checked before the first step, so bad
input reaches no shard.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar

from ..errors import InvalidArgument, InvalidType, NoPermission, ShardCountUnrecorded, ShardMismatch
from . import live
from . import validation as v
from .commands import Call, Plan, RunScript
from .operations import (
    MAX_BLOCK_STEP_MS,
    CleanReport,
    Counts,
    DeadItem,
    FailResult,
    Lease,
    Outcome,
    QueueKeys,
    RetryPolicy,
    add_pair,
    fail_args,
    lease_arg,
)
from .scripts import registry

T = TypeVar("T")
R = TypeVar("R")

MAX_SHARDS = v.MAX_SHARDS


@dataclass(frozen=True, slots=True)
class ShardLayout:
    """The shards of queue ``prefix``: their prefixes and the routing of ids."""

    prefix: str
    count: int

    def __post_init__(self) -> None:
        if not isinstance(self.prefix, str):
            raise InvalidType(f"prefix must be a str, not {type(self.prefix).__name__}")
        v.prefix(self.prefix, cluster=False)  # the rules of every queue prefix
        if "{" in self.prefix or "}" in self.prefix:
            raise InvalidArgument(
                "a sharded queue's prefix must hold no '{' or '}': each shard has a hash tag"
            )
        v.integer(self.count, "shards", 1, MAX_SHARDS)
        for shard in self.prefixes:
            v.prefix(shard, cluster=True)  # and each shard's, hash tag included

    @property
    def prefixes(self) -> tuple[str, ...]:
        """Each shard's queue prefix, ``{P#i}`` (a :class:`~rwq.protocol.validation.ShardPrefix`:
        a queue opened on its own refuses that form, RWQ-KEYS-010)."""
        return tuple(v.ShardPrefix(f"{{{self.prefix}#{i}}}") for i in range(self.count))

    @property
    def bell(self) -> bytes:
        """The doorbell, ``{P#bell}``: the list a blocked consumer waits on (RWQ-SHARD-006)."""
        return f"{{{self.prefix}#bell}}".encode()

    def shard_of(self, item_id: str) -> int:
        """The shard that holds ``item_id``: CRC-32 of its bytes, modulo the shard count."""
        return zlib.crc32(v.encode_id(item_id)) % self.count


def check_count(layout: ShardLayout) -> Plan[None]:
    """Record this client's shard count in shard 0, or check it against the one recorded there
    (a script call on shard 0, before a client's first operation)."""
    keys = QueueKeys(layout.prefixes[0])
    recorded = yield RunScript(registry()["shards"], (keys.queue,), (layout.count,))
    if recorded != layout.count:
        raise ShardMismatch(
            f"queue {layout.prefix!r} has {recorded} shards recorded in {layout.prefixes[0]}:shards, "
            f"this client {layout.count}: they would route ids to different shards"
        )


def unrecorded(layout: ShardLayout, refusal: NoPermission) -> ShardCountUnrecorded:
    """The refusal of :func:`check_count` in plain words: with no count recorded, the script tried
    to record this client's, and this user may not (only the admin role may, RWQ-SHARD-009)."""
    return ShardCountUnrecorded(
        f"this user may not record the shard count of sharded queue {layout.prefix!r}, and none is "
        f"recorded in {layout.prefixes[0]}:shards (only the admin role records it, RWQ-SHARD-009): "
        f"run `rwq shards --prefix {layout.prefix} --shards {layout.count}` as the admin first ({refusal})"
    )


def rotation(start: int, count: int) -> list[int]:
    """The shards in the order a lease visits them, from ``start``."""
    return [(start + step) % count for step in range(count)]


def group(layout: ShardLayout, items: Iterable[T], item_id: Callable[[T], str]) -> dict[int, list[int]]:
    """The positions of ``items`` by shard, each shard's in input order."""
    groups: dict[int, list[int]] = {}
    for position, item in enumerate(items):
        groups.setdefault(layout.shard_of(item_id(item)), []).append(position)
    return groups


def scatter(groups: Mapping[int, list[int]], results: Mapping[int, Sequence[R]], size: int) -> list[R]:
    """Per-shard results back in the input order ``groups`` recorded."""
    merged: list[R | None] = [None] * size
    for shard, positions in groups.items():
        for position, result in zip(positions, results[shard], strict=True):
            merged[position] = result
    return merged  # type: ignore[return-value]  # every position was filled


def total(counts: Iterable[Counts]) -> Counts:
    """The counts of a sharded queue: the sum of its shards'."""
    queued = processing = delayed = dead = 0
    for one in counts:
        queued, processing = queued + one.queued, processing + one.processing
        delayed, dead = delayed + one.delayed, dead + one.dead
    return Counts(queued, processing, delayed, dead)


def merged_report(reports: Iterable[CleanReport]) -> CleanReport:
    """One clean of every shard, as one report."""
    requeued: list[str] = []
    buried: list[str] = []
    dropped = promoted = 0
    for report in reports:
        requeued += report.requeued
        buried += report.dead
        dropped, promoted = dropped + report.dropped, promoted + report.promoted
    return CleanReport(tuple(requeued), dropped, tuple(buried), promoted)


def newest_dead(per_shard: Iterable[Sequence[DeadItem]], offset: int, count: int) -> list[DeadItem]:
    """Dead items of every shard, newest first, from ``offset`` (each shard listed its first
    ``offset + count``)."""
    every = sorted((item for items in per_shard for item in items), key=lambda item: -item.dead_at_ms)
    return every[offset : offset + count]


@dataclass(frozen=True, slots=True)
class OnShard:
    """Call ``method`` of shard ``shard``'s queue with these arguments; its result is sent back."""

    shard: int
    method: str
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class OnBell:
    """Run ``plan`` (a command on the doorbell, which routes by its key) on any shard's
    connection; with ``hint``, a failure is sent back as None rather than raised (RWQ-SHARD-006)."""

    plan: Plan[Any]
    hint: bool = False


ShardPlan: TypeAlias = Generator[OnShard | OnBell, Any, T]

MAX_TOKENS = 16
"""The most tokens one ring pushes, and the bell holds (lua/ring.lua)."""


def _ring_plan(layout: ShardLayout, tokens: int) -> Plan[Any]:
    return (yield RunScript(registry()["ring"], (layout.bell,), (min(tokens, MAX_TOKENS),)))


def _wait_plan(layout: ShardLayout, wait_ms: int) -> Plan[Any]:
    return (yield Call(("BLPOP", layout.bell, wait_ms / 1000), layout.bell))


def ring(layout: ShardLayout, ready: int) -> ShardPlan[None]:
    """Wake up to ``ready`` waiting consumers, when items were made ready (RWQ-SHARD-006)."""
    if ready > 0:
        yield OnBell(_ring_plan(layout, ready), hint=True)


class Rotation:
    """The order in which one client visits the shards: one step further on every call, from a
    random start, so that clients spread over the shards."""

    def __init__(self, count: int) -> None:
        self.count, self.next = count, random.randrange(count)

    def turn(self) -> list[int]:
        """The shards in this call's order."""
        order = rotation(self.next, self.count)
        self.next = (self.next + 1) % self.count
        return order


def _pairs(items: Iterable[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """add_many's items, each checked as ``add`` checks it."""
    checked = v.batch(items, "items")
    for item in checked:
        add_pair(item)
    return checked


def _held(held: object) -> Lease:
    """A lease argument, checked whole (id and token) as the shard's own call would check it."""
    lease = lease_arg(held)
    v.encode_id(lease.id)
    v.token(lease.token)
    return lease


def _item_id(item: object, require_lease: bool) -> str:
    """The id of a complete's item (a Lease, or an id unless ``require_lease``), checked."""
    if isinstance(item, Lease):
        v.encode_id(item.id)
        if require_lease:
            v.token(item.token)  # owner mode sends it
        return item.id
    if require_lease:
        raise InvalidArgument("require_lease needs Lease objects (their tokens prove ownership)")
    v.encode_id(item)
    return item  # type: ignore[return-value]  # encode_id accepted it: a str


def _each(
    groups: Mapping[int, list[int]], items: Sequence[Any], method: str, **kwargs: Any
) -> ShardPlan[dict[int, Any]]:
    """``method`` on every shard of ``groups``, with that shard's items in order."""
    results = {}
    for shard, positions in groups.items():
        results[shard] = yield OnShard(shard, method, ([items[i] for i in positions],), kwargs)
    return results


def add(layout: ShardLayout, item_id: str, data: bytes, delay_ms: int) -> ShardPlan[bool]:
    """add: on the id's shard."""
    v.encode_new_id(item_id)
    v.payload(data)
    v.duration_ms(delay_ms, "delay_ms", minimum=0)
    added = bool((yield OnShard(layout.shard_of(item_id), "add", (item_id, data), {"delay_ms": delay_ms})))
    yield from ring(layout, int(added and not delay_ms))
    return added


def add_many(layout: ShardLayout, items: Iterable[tuple[str, bytes]], delay_ms: int) -> ShardPlan[list[bool]]:
    """add_many: one batch per shard; one added-flag per item, in order."""
    v.duration_ms(delay_ms, "delay_ms", minimum=0)
    pairs = _pairs(items)
    groups = group(layout, pairs, lambda pair: pair[0])
    results = yield from _each(groups, pairs, "add_many", delay_ms=delay_ms)
    added: list[bool] = scatter(groups, results, len(pairs))
    yield from ring(layout, 0 if delay_ms else sum(added))
    return added


def lease(
    layout: ShardLayout, turns: Rotation, lease_ms: int, block: bool, timeout_ms: int
) -> ShardPlan[Lease | None]:
    """lease: a visit of the shards in rotation (RWQ-SHARD-004); a blocking lease then waits on
    the doorbell for at most a second (and the time left, and the time until a delayed item is
    due) and visits again (RWQ-SHARD-007). Time is the server's, from the lease replies."""
    v.duration_ms(lease_ms, "lease_ms")
    v.duration_ms(timeout_ms, "timeout_ms", minimum=0)
    if not v.flag(block, "block") and timeout_ms:
        raise InvalidArgument("timeout_ms needs block=True (RWQ-LEASE-014)")
    deadline: int | None = None
    while True:
        due = -1
        for shard in turns.turn():
            held, now, due_in = yield OnShard(shard, "lease_visit", (lease_ms,))
            if held is not None:
                return held  # type: ignore[no-any-return]
            if due_in >= 0:
                due = due_in if due < 0 else min(due, due_in)
        if not block:
            return None
        if deadline is None and timeout_ms:
            deadline = now + timeout_ms
        wait = MAX_BLOCK_STEP_MS
        if deadline is not None:
            if now >= deadline:
                return None
            wait = min(wait, deadline - now)
        if due >= 0:
            wait = max(min(wait, due), 1)
        yield OnBell(_wait_plan(layout, wait))


def lease_many(layout: ShardLayout, turns: Rotation, count: int, lease_ms: int) -> ShardPlan[list[Lease]]:
    """lease_many: up to ``count`` items, taking from the shards in rotation."""
    v.batch_size(count, "count")
    v.duration_ms(lease_ms, "lease_ms")
    leased: list[Lease] = []
    for shard in turns.turn():
        leased += yield OnShard(shard, "lease_many", (), {"count": count - len(leased), "lease_ms": lease_ms})
        if len(leased) == count:
            break
    return leased


def renew(layout: ShardLayout, held: Lease, lease_ms: int) -> ShardPlan[bool]:
    """renew: on the item's shard."""
    v.duration_ms(lease_ms, "lease_ms")
    return bool((yield OnShard(layout.shard_of(_held(held).id), "renew", (held, lease_ms))))


def release(layout: ShardLayout, held: Lease, delay_ms: int, refund_attempt: bool = False) -> ShardPlan[bool]:
    """release: on the item's shard."""
    v.duration_ms(delay_ms, "delay_ms", minimum=0)
    v.flag(refund_attempt, "refund_attempt")
    shard = layout.shard_of(_held(held).id)
    options = {"delay_ms": delay_ms, "refund_attempt": refund_attempt}
    released = bool((yield OnShard(shard, "release", (held,), options)))
    yield from ring(layout, int(released and not delay_ms))
    return released


def fail(layout: ShardLayout, held: Lease, reason: str, **options: Any) -> ShardPlan[FailResult]:
    """fail: on the item's shard; ``options`` are those of the queue's ``fail``."""
    fail_args(reason, **options)
    return (yield OnShard(layout.shard_of(_held(held).id), "fail", (held, reason), options))  # type: ignore[no-any-return]


def renew_many(layout: ShardLayout, leases: Sequence[Lease], lease_ms: int) -> ShardPlan[list[bool]]:
    """renew_many: one call per shard; False where the lease was lost."""
    v.duration_ms(lease_ms, "lease_ms")
    held = [_held(one) for one in v.batch(leases, "leases")]
    groups = group(layout, held, lambda one: one.id)
    return scatter(groups, (yield from _each(groups, held, "renew_many", lease_ms=lease_ms)), len(held))


def release_many(
    layout: ShardLayout, leases: Sequence[Lease], delay_ms: int, refund_attempt: bool = False
) -> ShardPlan[list[Outcome]]:
    """release_many: one call per shard."""
    v.duration_ms(delay_ms, "delay_ms", minimum=0)
    v.flag(refund_attempt, "refund_attempt")
    held = [_held(one) for one in v.batch(leases, "leases")]
    groups = group(layout, held, lambda one: one.id)
    outcomes: list[Outcome] = scatter(
        groups,
        (yield from _each(groups, held, "release_many", delay_ms=delay_ms, refund_attempt=refund_attempt)),
        len(held),
    )
    yield from ring(layout, 0 if delay_ms else outcomes.count(Outcome.DONE))
    return outcomes


def complete(layout: ShardLayout, item: Lease | str, require_lease: bool) -> ShardPlan[bool]:
    """complete: on the item's shard."""
    shard = layout.shard_of(_item_id(item, v.flag(require_lease, "require_lease")))
    return bool((yield OnShard(shard, "complete", (item,), {"require_lease": require_lease})))


def complete_many(
    layout: ShardLayout, items: Sequence[Lease | str], require_lease: bool
) -> ShardPlan[list[Outcome]]:
    """complete_many: one call per shard; one outcome per item, in order."""
    items = v.batch(items, "items")
    ids = [_item_id(item, v.flag(require_lease, "require_lease")) for item in items]
    groups = group(layout, ids, lambda item_id: item_id)
    results = yield from _each(groups, items, "complete_many", require_lease=require_lease)
    return scatter(groups, results, len(items))


def complete_and_lease(
    layout: ShardLayout,
    turns: Rotation,
    items: Sequence[Lease | str],
    *,
    count: int,
    lease_ms: int,
    require_lease: bool,
) -> ShardPlan[tuple[list[Outcome], list[Lease]]]:
    """complete_and_lease(_many), visiting the shards in rotation (RWQ-SHARD-005): on the shard
    next in the rotation, the composite completes that shard's items and leases (a lease alone
    when none of the items is there); then the other shards' items are completed, one call per
    shard, and what the first shard lacked is leased from the others, in rotation order. The
    first call leases, so a caller that may not lease (the operator role) writes nothing
    (RWQ-SEC-006), and the fast path starves no shard."""
    items = v.batch(items, "items")
    v.batch_size(len(items), "items to complete")
    v.batch_size(count, "count")
    v.duration_ms(lease_ms, "lease_ms")
    require_lease = v.flag(require_lease, "require_lease")
    groups = group(layout, items, lambda item: _item_id(item, require_lease))
    order = turns.turn()
    kwargs = {"require_lease": require_lease}
    results: dict[int, Any] = {}
    leased: list[Lease]
    if order[0] in groups:
        mine = [items[i] for i in groups[order[0]]]
        results[order[0]], leased = yield OnShard(
            order[0], "complete_and_lease_many", (mine, count, lease_ms), kwargs
        )
    else:
        leased = yield OnShard(order[0], "lease_many", (), {"count": count, "lease_ms": lease_ms})
    others = {shard: positions for shard, positions in groups.items() if shard != order[0]}
    results |= yield from _each(others, items, "complete_many", **kwargs)
    for shard in order[1:]:
        if len(leased) == count:
            break
        leased += yield OnShard(shard, "lease_many", (), {"count": count - len(leased), "lease_ms": lease_ms})
    return scatter(groups, results, len(items)), leased


def every_shard(layout: ShardLayout, method: str, **kwargs: Any) -> ShardPlan[list[Any]]:
    """``method`` on every shard, in shard order."""
    results = []
    for shard in range(layout.count):
        results.append((yield OnShard(shard, method, (), kwargs)))
    return results


def counts(layout: ShardLayout) -> ShardPlan[Counts]:
    """counts: the sum of the shards' (each read at its own instant)."""
    return total((yield from every_shard(layout, "counts")))


def light_clean(layout: ShardLayout, chunk: int, pace_ms: int) -> ShardPlan[CleanReport]:
    """light_clean of every shard (each paced on its own)."""
    v.batch_size(chunk, "chunk")
    v.duration_ms(pace_ms, "pace_ms", minimum=0)
    return merged_report((yield from every_shard(layout, "light_clean", chunk=chunk, pace_ms=pace_ms)))


def deep_clean(layout: ShardLayout, chunk: int) -> ShardPlan[CleanReport]:
    """deep_clean of every shard."""
    v.batch_size(chunk, "chunk")
    return merged_report((yield from every_shard(layout, "deep_clean", chunk=chunk)))


def set_retry_policy(layout: ShardLayout, policy: RetryPolicy | None, if_absent: bool) -> ShardPlan[bool]:
    """The retry policy on every shard, shard 0 first: shard 0's decides (RWQ-SHARD-008). With
    ``if_absent`` the policy is stored on shard 0 only if it has none, and the others then get
    shard 0's policy, whichever client stored it, so that racing clients (workers starting with
    different defaults) and a set cut short leave every shard with one policy; a shard that holds
    it already is not written. True when shard 0 stored this call's policy."""
    if policy is not None and not isinstance(policy, RetryPolicy):
        raise InvalidType(f"policy must be a RetryPolicy or None, not {type(policy).__name__}")
    stored = bool(
        (
            yield OnShard(
                0, "set_retry_policy", (), {"policy": policy, "if_absent": v.flag(if_absent, "if_absent")}
            )
        )
    )
    decided = policy if stored else (yield OnShard(0, "retry_policy"))
    for shard in range(1, layout.count):
        # Read first: a worker may read the policy but not write it (SPEC §13.1).
        if (yield OnShard(shard, "retry_policy")) != decided:
            yield OnShard(shard, "set_retry_policy", (), {"policy": decided})
    return stored


def dead_items(layout: ShardLayout, offset: int, count: int) -> ShardPlan[list[DeadItem]]:
    """Dead items of every shard, newest first: each shard's newest ``offset + count`` hold the page."""
    v.integer(offset, "offset", 0, 100_000_000)
    v.batch_size(count, "count")
    per_shard = []
    for shard in range(layout.count):
        items: list[DeadItem] = []
        while len(items) < offset + count:
            size = min(offset + count - len(items), v.MAX_BATCH)
            page = yield OnShard(shard, "dead_items", (), {"offset": len(items), "count": size})
            items += page
            if len(page) < size:
                break
        per_shard.append(items)
    return newest_dead(per_shard, offset, count)


def dead_item(layout: ShardLayout, item_id: str) -> ShardPlan[DeadItem | None]:
    """One dead item, from its shard."""
    return (yield OnShard(layout.shard_of(item_id), "dead_item", (item_id,)))  # type: ignore[no-any-return]


def retry_policy(layout: ShardLayout) -> ShardPlan[RetryPolicy | None]:
    """The retry policy, as shard 0 holds it (setting it sets every shard's)."""
    return (yield OnShard(0, "retry_policy"))  # type: ignore[no-any-return]


def dead_action(layout: ShardLayout, method: str, ids: Sequence[str]) -> ShardPlan[list[bool]]:
    """requeue_dead / purge_dead: one call per shard; one flag per id, in order. A requeue rings
    the doorbell for the items it made ready."""
    ids = v.batch(ids, "ids")
    for item_id in ids:
        v.encode_id(item_id)
    groups = group(layout, ids, lambda item_id: item_id)
    done: list[bool] = scatter(groups, (yield from _each(groups, ids, method)), len(ids))
    yield from ring(layout, sum(done) if method == "requeue_dead" else 0)
    return done


def worker_beat(
    layout: ShardLayout, worker: str, ttl_ms: int, record: Mapping[str, Any]
) -> ShardPlan[live.Beat]:
    """A sharded queue's workers register on shard 0 (SPEC §21); checked before the shard count."""
    live.worker_id(worker)
    v.integer(ttl_ms, "ttl_ms", live.MIN_TTL_MS, live.MAX_TTL_MS, unit=" ms")
    live.record_json(record)
    return (yield OnShard(0, "worker_beat", (worker, ttl_ms, record)))  # type: ignore[no-any-return]


def worker_leave(layout: ShardLayout, worker: str) -> ShardPlan[bool]:
    """Leave shard 0's list of live workers."""
    live.worker_id(worker)
    return bool((yield OnShard(0, "worker_leave", (worker,))))


def workers(layout: ShardLayout, offset: int, count: int) -> ShardPlan[list[live.LiveWorker]]:
    """The live workers, as shard 0 lists them."""
    v.integer(offset, "offset", 0, live.MAX_OFFSET)
    v.batch_size(count, "count")
    return (yield OnShard(0, "workers", (), {"offset": offset, "count": count}))  # type: ignore[no-any-return]
