"""One logical queue over N RWQ/1 queues, for a queue that must outgrow one Redis node: profile
sharded (SPEC §19, docs/design/sharded.md).

Shard ``i`` of queue ``P`` is an ordinary :class:`~rwq.WorkQueue` with prefix ``{P#i}``, in the
hash slot of ``P#i``, so a Redis Cluster spreads the shards over its masters. Every client of the
queue must use the same number of shards: an id always lands on shard ``CRC-32(id) % shards``,
so ``add`` stays idempotent. The first operation records the count in shard 0
(``{P#0}:shards``), or checks it against the one recorded there: a client with another count
gets ``ShardMismatch``. Under the ACL roles only the admin may record it
(:meth:`ShardedWorkQueue.record_shard_count`, ``rwq shards``); the others get ``NoPermission``
until it is recorded. Leases visit the shards in rotation, one step further each call, so that
a non-empty shard is tried first at least once every ``shards`` calls; with every shard
non-empty, one consumer takes from each in turn, and the k-th oldest item of a shard is leased
within ``shards * k`` calls. A blocking lease that finds every shard empty waits on the
doorbell ``{P#bell}``, which adds and releases ring, at most a second at a time. The rules
live in :mod:`rwq.protocol.sharding`; these shells run them on the shards' queues.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar, overload

from redis import Redis
from redis.asyncio import Redis as AsyncRedis
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.cluster import RedisCluster

from .aio import AsyncWorkQueue
from .client import WorkQueue
from .errors import InvalidArgument, NoPermission, RwqError
from .protocol import sharding as plans
from .protocol import stats as stats_plans
from .protocol import validation
from .protocol.live import Beat, LiveWorker
from .protocol.operations import CleanReport, Counts, DeadItem, FailResult, Lease, Outcome, RetryPolicy
from .protocol.sharding import OnBell, ShardLayout, ShardPlan
from .protocol.stats import QueueStats

T = TypeVar("T")
log = logging.getLogger("rwq")


class ShardedWorkQueue:
    """Queue ``prefix`` over ``shards`` (1..1024) RWQ/1 queues ``{prefix#i}``; the other options
    are :class:`~rwq.WorkQueue`'s, applied to every shard."""

    def __init__(self, redis: Redis | RedisCluster, prefix: str, *, shards: int, **options: Any) -> None:
        self.layout = ShardLayout(prefix, shards)
        self.queues = tuple(WorkQueue(redis, shard, **options) for shard in self.layout.prefixes)
        self._turns = plans.Rotation(shards)
        self._counted = False  # the shard count is checked against shard 0's at first use

    @property
    def prefix(self) -> str:
        return self.layout.prefix

    def record_shard_count(self) -> None:
        """Record the queue's shard count in shard 0 when none is recorded, else check this
        client's against it (``ShardMismatch``). Every first operation does this; under the ACL
        roles of SPEC §13.1 only the admin may record, so the admin runs this once, first."""
        try:
            self.queues[0]._run(plans.check_count(self.layout))
        except NoPermission as exc:
            raise plans.unrecorded(self.layout, exc) from exc
        self._counted = True

    def add(self, item_id: str, data: bytes, *, delay_ms: int = 0) -> bool:
        """Add an item to its shard, ready now or after ``delay_ms``; False if the id is known."""
        return self._run(plans.add(self.layout, item_id, data, delay_ms))

    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        """Add many items, one batch per shard; one added-flag per item, in order."""
        return self._run(plans.add_many(self.layout, items, delay_ms))

    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        """Lease one ready item, from the shards in rotation; wait for one when ``block``."""
        return self._run(plans.lease(self.layout, self._turns, lease_ms, block, timeout_ms))

    @overload
    def lease_many(self, *, count: int, lease_ms: int) -> list[Lease]: ...
    @overload
    def lease_many(self, count: int, lease_ms: int, /) -> list[Lease]: ...  # deprecated: by keyword
    def lease_many(self, *args: int, count: int | None = None, lease_ms: int | None = None) -> list[Lease]:
        """Lease up to ``count`` ready items, from the shards in rotation; both by keyword (by
        position, deprecated)."""
        count, lease_ms = validation.lease_many_arguments(args, count, lease_ms)
        return self._run(plans.lease_many(self.layout, self._turns, count, lease_ms))

    def renew(self, lease: Lease, lease_ms: int) -> bool:
        """Extend a held lease; False if it was lost."""
        return bool(self._run(plans.renew(self.layout, lease, lease_ms)))

    def renew_many(self, leases: Sequence[Lease], lease_ms: int) -> list[bool]:
        """Extend many leases, one call per shard."""
        return self._run(plans.renew_many(self.layout, leases, lease_ms))

    def complete(self, item: Lease | str, *, require_lease: bool = False) -> bool:
        """Complete an item on its shard: True for its first completer only."""
        return self._run(plans.complete(self.layout, item, require_lease))

    def complete_many(self, items: Sequence[Lease | str], *, require_lease: bool = False) -> list[Outcome]:
        """Complete many items, one call per shard; one outcome per item, in order."""
        return self._run(plans.complete_many(self.layout, items, require_lease))

    def complete_and_lease(
        self, item: Lease | str, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[Outcome, Lease | None]:
        """Complete an item and lease the next, keeping the rotation (one call when the item's
        shard is next in turn)."""
        outcomes, leases = self.complete_and_lease_many([item], 1, lease_ms, require_lease=require_lease)
        return outcomes[0], leases[0] if leases else None

    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        """Complete 1..1000 items and lease up to ``count``, keeping the rotation."""
        return self._run(
            plans.complete_and_lease(
                self.layout, self._turns, items, count=count, lease_ms=lease_ms, require_lease=require_lease
            )
        )

    def release(self, lease: Lease, *, delay_ms: int = 0, refund_attempt: bool = False) -> bool:
        """Give a held item back to its shard, at once or after ``delay_ms``; ``refund_attempt``
        as in :meth:`WorkQueue.release`."""
        return bool(self._run(plans.release(self.layout, lease, delay_ms, refund_attempt)))

    def release_many(
        self, leases: Sequence[Lease], *, delay_ms: int = 0, refund_attempt: bool = False
    ) -> list[Outcome]:
        """Give many held items back, one call per shard."""
        return self._run(plans.release_many(self.layout, leases, delay_ms, refund_attempt))

    def fail(
        self,
        lease: Lease,
        reason: str = "",
        *,
        dead: bool = False,
        delay_ms: int | None = None,
        fallback_delay_ms: int = 0,
        detail: str = "",
    ) -> FailResult:
        """Record a failed attempt on the item's shard; the options are :meth:`WorkQueue.fail`'s."""
        options = {
            "dead": dead,
            "delay_ms": delay_ms,
            "fallback_delay_ms": fallback_delay_ms,
            "detail": detail,
        }
        result: FailResult = self._run(plans.fail(self.layout, lease, reason, **options))
        return result

    def counts(self) -> Counts:
        """The sum of the shards' counts."""
        return self._run(plans.counts(self.layout))

    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        """Light-clean every shard (each paced on its own with ``pace_ms``)."""
        return self._run(plans.light_clean(self.layout, chunk, pace_ms))

    def deep_clean(self, *, chunk: int = 1000) -> CleanReport:
        """Deep-clean every shard."""
        return self._run(plans.deep_clean(self.layout, chunk))

    def set_retry_policy(self, policy: RetryPolicy | None, *, if_absent: bool = False) -> bool:
        """Store the retry policy on every shard; True when every shard stored it."""
        return self._run(plans.set_retry_policy(self.layout, policy, if_absent))

    def dead_items(self, *, offset: int = 0, count: int = 100) -> list[DeadItem]:
        """Dead-lettered items of every shard, newest first."""
        return self._run(plans.dead_items(self.layout, offset, count))

    def dead_item(self, item_id: str) -> DeadItem | None:
        """One dead-lettered item with its payload, or None."""
        return self._run(plans.dead_item(self.layout, item_id))

    def retry_policy(self) -> RetryPolicy | None:
        """The queue's retry policy, or None."""
        return self._run(plans.retry_policy(self.layout))

    def requeue_dead(self, ids: Sequence[str]) -> list[bool]:
        """Make dead items ready again, each on its shard; False where the id is not dead or is live."""
        return self._run(plans.dead_action(self.layout, "requeue_dead", ids))

    def purge_dead(self, ids: Sequence[str]) -> list[bool]:
        """Delete dead items for good, each on its shard; False where the id is not dead."""
        return self._run(plans.dead_action(self.layout, "purge_dead", ids))

    def put_schedule(self, name: str, schedule: Any, data: bytes = b"") -> bool:
        """Refused: periodic items on a sharded queue wait for a design (RWQ-SCHED-016)."""
        raise InvalidArgument("schedules are not supported on a sharded queue yet (RWQ-SCHED-016)")

    def worker_beat(self, worker_id: str, ttl_ms: int, record: Mapping[str, Any]) -> Beat:
        """Register or refresh a live worker, on shard 0 (SPEC §21)."""
        return self._run(plans.worker_beat(self.layout, worker_id, ttl_ms, record))

    def worker_leave(self, worker_id: str) -> bool:
        """Remove a worker's entry from shard 0; False when it had none."""
        return self._run(plans.worker_leave(self.layout, worker_id))

    def workers(self, *, offset: int = 0, count: int = 100) -> list[LiveWorker]:
        """The live workers, as shard 0 lists them."""
        return self._run(plans.workers(self.layout, offset, count))

    def enable_stats(self) -> bool:
        """Turn stats on for every shard, shard 0 first (SPEC §22); False when all were on."""
        return self._run(stats_plans.sharded_enable(self.layout))

    def disable_stats(self) -> bool:
        """Turn stats off for every shard, shard 0 first; False when all were off."""
        return self._run(stats_plans.sharded_disable(self.layout))

    def stats(self) -> QueueStats:
        """The shards' statistics, summed minute by minute (RWQ-STATS-007)."""
        return self._run(stats_plans.sharded_stats(self.layout))

    def _run(self, plan: ShardPlan[T]) -> T:
        try:
            step = next(plan)  # a plan checks all of its arguments before its first step
            if not self._counted:
                self.record_shard_count()  # once, before the first I/O
            while True:
                if isinstance(step, OnBell):
                    step = plan.send(self._bell(step))
                else:
                    step = plan.send(getattr(self.queues[step.shard], step.method)(*step.args, **step.kwargs))
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    def _bell(self, step: OnBell) -> Any:
        try:
            return self.queues[0]._run(step.plan)  # the doorbell's commands route by its key
        except RwqError as exc:
            if not step.hint:
                raise
            log.warning("rwq: the doorbell of %r was not rung: %s: %s", self.layout.prefix, exc.code, exc)
            return None


class AsyncShardedWorkQueue:
    """:class:`ShardedWorkQueue` for ``redis.asyncio`` clients."""

    def __init__(
        self, redis: AsyncRedis | AsyncRedisCluster, prefix: str, *, shards: int, **options: Any
    ) -> None:
        self.layout = ShardLayout(prefix, shards)
        self.queues = tuple(AsyncWorkQueue(redis, shard, **options) for shard in self.layout.prefixes)
        self._turns = plans.Rotation(shards)
        self._counted = False  # the shard count is checked against shard 0's at first use

    @property
    def prefix(self) -> str:
        return self.layout.prefix

    async def record_shard_count(self) -> None:
        """:meth:`ShardedWorkQueue.record_shard_count`."""
        try:
            await self.queues[0]._run(plans.check_count(self.layout))
        except NoPermission as exc:
            raise plans.unrecorded(self.layout, exc) from exc
        self._counted = True

    async def add(self, item_id: str, data: bytes, *, delay_ms: int = 0) -> bool:
        """Add an item to its shard, ready now or after ``delay_ms``; False if the id is known."""
        return await self._run(plans.add(self.layout, item_id, data, delay_ms))

    async def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        """Add many items, one batch per shard; one added-flag per item, in order."""
        return await self._run(plans.add_many(self.layout, items, delay_ms))

    async def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        """Lease one ready item, from the shards in rotation; wait for one when ``block``."""
        return await self._run(plans.lease(self.layout, self._turns, lease_ms, block, timeout_ms))

    @overload
    async def lease_many(self, *, count: int, lease_ms: int) -> list[Lease]: ...
    @overload
    async def lease_many(self, count: int, lease_ms: int, /) -> list[Lease]: ...  # deprecated: by keyword
    async def lease_many(
        self, *args: int, count: int | None = None, lease_ms: int | None = None
    ) -> list[Lease]:
        """Lease up to ``count`` ready items, from the shards in rotation; both by keyword (by
        position, deprecated)."""
        count, lease_ms = validation.lease_many_arguments(args, count, lease_ms)
        return await self._run(plans.lease_many(self.layout, self._turns, count, lease_ms))

    async def renew(self, lease: Lease, lease_ms: int) -> bool:
        """Extend a held lease; False if it was lost."""
        return bool(await self._run(plans.renew(self.layout, lease, lease_ms)))

    async def renew_many(self, leases: Sequence[Lease], lease_ms: int) -> list[bool]:
        """Extend many leases, one call per shard."""
        return await self._run(plans.renew_many(self.layout, leases, lease_ms))

    async def complete(self, item: Lease | str, *, require_lease: bool = False) -> bool:
        """Complete an item on its shard: True for its first completer only."""
        return await self._run(plans.complete(self.layout, item, require_lease))

    async def complete_many(
        self, items: Sequence[Lease | str], *, require_lease: bool = False
    ) -> list[Outcome]:
        """Complete many items, one call per shard; one outcome per item, in order."""
        return await self._run(plans.complete_many(self.layout, items, require_lease))

    async def complete_and_lease(
        self, item: Lease | str, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[Outcome, Lease | None]:
        """Complete an item and lease the next, keeping the rotation."""
        outcomes, leases = await self.complete_and_lease_many(
            [item], 1, lease_ms, require_lease=require_lease
        )
        return outcomes[0], leases[0] if leases else None

    async def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        """Complete 1..1000 items and lease up to ``count``, keeping the rotation."""
        plan = plans.complete_and_lease(
            self.layout, self._turns, items, count=count, lease_ms=lease_ms, require_lease=require_lease
        )
        return await self._run(plan)

    async def release(self, lease: Lease, *, delay_ms: int = 0, refund_attempt: bool = False) -> bool:
        """Give a held item back to its shard, at once or after ``delay_ms``; ``refund_attempt``
        as in :meth:`WorkQueue.release`."""
        return bool(await self._run(plans.release(self.layout, lease, delay_ms, refund_attempt)))

    async def release_many(
        self, leases: Sequence[Lease], *, delay_ms: int = 0, refund_attempt: bool = False
    ) -> list[Outcome]:
        """Give many held items back, one call per shard."""
        return await self._run(plans.release_many(self.layout, leases, delay_ms, refund_attempt))

    async def fail(
        self,
        lease: Lease,
        reason: str = "",
        *,
        dead: bool = False,
        delay_ms: int | None = None,
        fallback_delay_ms: int = 0,
        detail: str = "",
    ) -> FailResult:
        """Record a failed attempt on the item's shard; the options are :meth:`WorkQueue.fail`'s."""
        options = {
            "dead": dead,
            "delay_ms": delay_ms,
            "fallback_delay_ms": fallback_delay_ms,
            "detail": detail,
        }
        result: FailResult = await self._run(plans.fail(self.layout, lease, reason, **options))
        return result

    async def counts(self) -> Counts:
        """The sum of the shards' counts."""
        return await self._run(plans.counts(self.layout))

    async def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        """Light-clean every shard (each paced on its own with ``pace_ms``)."""
        return await self._run(plans.light_clean(self.layout, chunk, pace_ms))

    async def deep_clean(self, *, chunk: int = 1000) -> CleanReport:
        """Deep-clean every shard."""
        return await self._run(plans.deep_clean(self.layout, chunk))

    async def set_retry_policy(self, policy: RetryPolicy | None, *, if_absent: bool = False) -> bool:
        """Store the retry policy on every shard; True when every shard stored it."""
        return await self._run(plans.set_retry_policy(self.layout, policy, if_absent))

    async def dead_items(self, *, offset: int = 0, count: int = 100) -> list[DeadItem]:
        """Dead-lettered items of every shard, newest first."""
        return await self._run(plans.dead_items(self.layout, offset, count))

    async def dead_item(self, item_id: str) -> DeadItem | None:
        """One dead-lettered item with its payload, or None."""
        return await self._run(plans.dead_item(self.layout, item_id))

    async def retry_policy(self) -> RetryPolicy | None:
        """The queue's retry policy, or None."""
        return await self._run(plans.retry_policy(self.layout))

    async def requeue_dead(self, ids: Sequence[str]) -> list[bool]:
        """Make dead items ready again, each on its shard; False where the id is not dead or is live."""
        return await self._run(plans.dead_action(self.layout, "requeue_dead", ids))

    async def purge_dead(self, ids: Sequence[str]) -> list[bool]:
        """Delete dead items for good, each on its shard; False where the id is not dead."""
        return await self._run(plans.dead_action(self.layout, "purge_dead", ids))

    async def put_schedule(self, name: str, schedule: Any, data: bytes = b"") -> bool:
        """Refused: periodic items on a sharded queue wait for a design (RWQ-SCHED-016)."""
        raise InvalidArgument("schedules are not supported on a sharded queue yet (RWQ-SCHED-016)")

    async def worker_beat(self, worker_id: str, ttl_ms: int, record: Mapping[str, Any]) -> Beat:
        """:meth:`ShardedWorkQueue.worker_beat`."""
        return await self._run(plans.worker_beat(self.layout, worker_id, ttl_ms, record))

    async def worker_leave(self, worker_id: str) -> bool:
        """:meth:`ShardedWorkQueue.worker_leave`."""
        return await self._run(plans.worker_leave(self.layout, worker_id))

    async def workers(self, *, offset: int = 0, count: int = 100) -> list[LiveWorker]:
        """:meth:`ShardedWorkQueue.workers`."""
        return await self._run(plans.workers(self.layout, offset, count))

    async def enable_stats(self) -> bool:
        """:meth:`ShardedWorkQueue.enable_stats`."""
        return await self._run(stats_plans.sharded_enable(self.layout))

    async def disable_stats(self) -> bool:
        """:meth:`ShardedWorkQueue.disable_stats`."""
        return await self._run(stats_plans.sharded_disable(self.layout))

    async def stats(self) -> QueueStats:
        """:meth:`ShardedWorkQueue.stats`."""
        return await self._run(stats_plans.sharded_stats(self.layout))

    async def _run(self, plan: ShardPlan[T]) -> T:
        try:
            step = next(plan)  # a plan checks all of its arguments before its first step
            if not self._counted:
                await self.record_shard_count()  # once, before the first I/O
            while True:
                if isinstance(step, OnBell):
                    step = plan.send(await self._bell(step))
                else:
                    step = plan.send(
                        await getattr(self.queues[step.shard], step.method)(*step.args, **step.kwargs)
                    )
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    async def _bell(self, step: OnBell) -> Any:
        try:
            return await self.queues[0]._run(step.plan)  # the doorbell's commands route by its key
        except RwqError as exc:
            if not step.hint:
                raise
            log.warning("rwq: the doorbell of %r was not rung: %s: %s", self.layout.prefix, exc.code, exc)
            return None
