"""The synchronous client: :class:`WorkQueue`, a thin shell over the sans-IO plans."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar, overload

from redis import Redis
from redis.cluster import RedisCluster
from redis.exceptions import NoScriptError, ResponseError

from . import _shell
from .errors import RwqError
from .protocol import declared, live, periodic, stats, validation
from .protocol import operations as ops
from .protocol.commands import Command, Plan, RunScript
from .protocol.live import Beat, LiveWorker
from .protocol.operations import CleanReport, Counts, DeadItem, FailResult, Lease, Outcome, RetryPolicy
from .protocol.periodic import Fired, Schedule, ScheduleList
from .protocol.stats import QueueStats

T = TypeVar("T")


class WorkQueue:
    """One RWQ/1 queue, identified by its key prefix, on a redis-py ``Redis`` or ``RedisCluster``.

    ``legacy_lease_key`` also writes ``<prefix>:leased_by_session:<id>``, for fleets that still
    run redis-work-queue 0.1.x workers and cleaners. With ``wait_replicas`` > 0, adds and
    completes wait (``WAIT``, at most ``wait_timeout_ms``) until that many replicas have the
    write, and raise :class:`~rwq.errors.NotReplicated` when fewer did (SPEC §17).
    ``flat_in_flight`` (profile flat, SPEC §18) keeps this client's leased ids in the sorted set
    ``<prefix>:in_flight`` rather than the processing list, so that completing, releasing and
    cleaning cost the same however many items are in flight; redis-work-queue 0.1.x cleaners do
    not see those leases (SPEC §18 lists what a mixed fleet loses).
    ``declared_keys`` (profile declared-keys, SPEC §20) passes every key a script touches in
    its KEYS, for Dragonfly's default script flags and for proxies that route or authorise on
    declared keys; on Redis 7 its ACL roles need write access to every declared key
    (``rwq acl --declared-keys``).
    """

    def __init__(
        self,
        redis: Redis | RedisCluster,
        prefix: str,
        *,
        legacy_lease_key: bool = False,
        flat_in_flight: bool = False,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 1000,
        declared_keys: bool = False,
    ) -> None:
        self._redis: Any = redis
        self._cluster = _shell.is_cluster(redis, asyncio=False)
        self.keys = _shell.queue_keys(redis, prefix, cluster=self._cluster)
        self.legacy_lease_key = validation.flag(legacy_lease_key, "legacy_lease_key")
        self.flat_in_flight = validation.flag(flat_in_flight, "flat_in_flight")
        self.wait = ops.wait_for(wait_replicas, wait_timeout_ms)
        self.declared_keys = validation.flag(declared_keys, "declared_keys")
        self._windows: declared.Windows = {}
        self._checked = False

    @property
    def prefix(self) -> str:
        return self.keys.prefix

    def add(self, item_id: str, data: bytes, *, delay_ms: int = 0) -> bool:
        """Add an item, ready now or after ``delay_ms``; False if the id is already known."""
        return bool(
            self._run(ops.first(ops.add(self.keys, [(item_id, data)], delay_ms=delay_ms, wait=self.wait)))
        )

    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        """Add many items in one round trip per 1000; one added-flag per item."""
        return self._run(ops.add(self.keys, items, delay_ms=delay_ms, wait=self.wait))

    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        """Lease the oldest ready item for ``lease_ms``; wait for one when ``block`` (0 = no limit)."""
        return self._run(
            ops.first(
                ops.lease(
                    self.keys,
                    lease_ms,
                    block=block,
                    timeout_ms=timeout_ms,
                    legacy=self.legacy_lease_key,
                    flat=self.flat_in_flight,
                )
            )
        )

    @overload
    def lease_many(self, *, count: int, lease_ms: int) -> list[Lease]: ...
    @overload
    def lease_many(self, count: int, lease_ms: int, /) -> list[Lease]: ...  # deprecated: by keyword
    def lease_many(self, *args: int, count: int | None = None, lease_ms: int | None = None) -> list[Lease]:
        """Lease up to ``count`` ready items at once, without waiting; both by keyword (by position,
        deprecated: the order is the reverse of :meth:`lease`'s and easy to swap)."""
        count, lease_ms = validation.lease_many_arguments(args, count, lease_ms)
        return self._run(
            ops.lease(
                self.keys, lease_ms, count=count, legacy=self.legacy_lease_key, flat=self.flat_in_flight
            )
        )

    def lease_visit(self, lease_ms: int) -> tuple[Lease | None, int, int]:
        """One non-blocking lease, with the server's time (ms) and the ms until the next delayed
        item is due (-1: none): how a sharded queue visits this shard (RWQ-SHARD-007)."""
        return self._run(
            ops.lease_visit(self.keys, lease_ms, legacy=self.legacy_lease_key, flat=self.flat_in_flight)
        )

    def renew(self, lease: Lease, lease_ms: int) -> bool:
        """Extend a held lease to ``lease_ms`` from now; False if it was lost."""
        return bool(
            self._run(ops.first(ops.renew(self.keys, [lease], lease_ms, legacy=self.legacy_lease_key)))
        )

    def renew_many(self, leases: Sequence[Lease], lease_ms: int) -> list[bool]:
        """Extend many leases in one round trip; False where the lease was lost."""
        return self._run(ops.renew(self.keys, leases, lease_ms, legacy=self.legacy_lease_key))

    def complete(self, item: Lease | str, *, require_lease: bool = False) -> bool:
        """Complete an item: True for its first completer only.

        With ``require_lease`` the caller must still hold the lease, else :class:`LeaseLost`.
        """
        item_id = item.id if isinstance(item, Lease) else item
        return self._run(
            ops.owned(ops.complete(self.keys, [item], require_lease=require_lease, wait=self.wait), item_id)
        )

    def complete_many(self, items: Sequence[Lease | str], *, require_lease: bool = False) -> list[Outcome]:
        """Complete many items in one round trip per 1000."""
        return self._run(ops.complete(self.keys, items, require_lease=require_lease, wait=self.wait))

    def complete_and_lease(
        self, item: Lease | str, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[Outcome, Lease | None]:
        """Complete an item and lease the next ready one in one round trip (no waiting).

        A consumer's fast path: the outcome is ``complete``'s (``LEASE_LOST`` is reported, not
        raised, so that the next lease is never dropped); the lease is None when nothing is ready.
        """
        outcomes, leases = self.complete_and_lease_many([item], 1, lease_ms, require_lease=require_lease)
        return outcomes[0], leases[0] if leases else None

    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        """Complete 1..1000 items and lease up to ``count`` ready ones, in one round trip.

        Only when that call stopped early (1000 stale entries skipped; with profile declared-keys,
        an id outside its window) does a plain lease follow for the rest (RWQ-NEXT-004);
        should that one fail, its RedisFailure is raised although the completions took effect.
        """
        return self._run(
            ops.complete_and_lease(
                self.keys,
                items,
                lease_ms,
                count=count,
                require_lease=require_lease,
                legacy=self.legacy_lease_key,
                flat=self.flat_in_flight,
                wait=self.wait,
            )
        )

    def release(self, lease: Lease, *, delay_ms: int = 0, refund_attempt: bool = False) -> bool:
        """Give a held item back, now or after ``delay_ms``; False if it had been completed meanwhile.

        ``refund_attempt``: the lease's attempt is not counted (an item given back unfinished, say
        at shutdown, does not use up its attempts; RWQ-RETRY-020).
        """
        return self._run(
            ops.owned(
                ops.release(self.keys, [lease], delay_ms=delay_ms, refund_attempt=refund_attempt),
                ops.lease_arg(lease).id,
            )
        )

    def release_many(
        self, leases: Sequence[Lease], *, delay_ms: int = 0, refund_attempt: bool = False
    ) -> list[Outcome]:
        """Release many held items in one round trip per 1000."""
        return self._run(ops.release(self.keys, leases, delay_ms=delay_ms, refund_attempt=refund_attempt))

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
        """Record a failed attempt: the item is retried after the queue's backoff, or dead-lettered
        once its attempts are used up.

        ``dead``: a failure no retry can fix; dead-letter the item now, whatever attempts are left
        (RWQ-RETRY-016). ``delay_ms``: retry after exactly this many ms instead of the backoff; an
        item out of attempts still goes dead (RWQ-RETRY-017). ``fallback_delay_ms``: the delay
        when the queue has no retry policy (0: at once, like release; RWQ-RETRY-019).
        ``detail`` (at most 8192 bytes of UTF-8, e.g. a traceback) is kept with a dead item
        apart from its reason (RWQ-RETRY-018).
        """
        return self._run(
            ops.fail(
                self.keys,
                lease,
                reason,
                dead=dead,
                delay_ms=delay_ms,
                fallback_delay_ms=fallback_delay_ms,
                detail=detail,
            )
        )

    def set_retry_policy(self, policy: RetryPolicy | None, *, if_absent: bool = False) -> bool:
        """Store the queue's retry policy in Redis (None removes it); True when written.

        ``if_absent`` stores it only when the queue has none, so that a worker's default never
        replaces a policy someone set (RWQ-RETRY-015).
        """
        return self._run(ops.set_policy(self.keys, policy, if_absent=if_absent))

    def retry_policy(self) -> RetryPolicy | None:
        """The queue's retry policy, or None."""
        return self._run(ops.get_policy(self.keys))

    def dead_items(self, *, offset: int = 0, count: int = 100) -> list[DeadItem]:
        """Dead-lettered items, newest first (without payloads)."""
        return self._run(ops.dead_items(self.keys, offset=offset, count=count))

    def dead_item(self, item_id: str) -> DeadItem | None:
        """One dead-lettered item with its payload, or None."""
        return self._run(ops.dead_item(self.keys, item_id))

    def requeue_dead(self, ids: Sequence[str]) -> list[bool]:
        """Make dead items ready again, attempts reset; False where the id is not dead or is live."""
        return self._run(ops.dead_action(self.keys, "requeue", ids))

    def purge_dead(self, ids: Sequence[str]) -> list[bool]:
        """Delete dead items for good; False where the id is not dead."""
        return self._run(ops.dead_action(self.keys, "purge", ids))

    def counts(self) -> Counts:
        """Ready and in-flight counts, read at one instant."""
        return self._run(ops.counts(self.keys))

    def queue_len(self) -> int:
        """Ready items: ``LLEN <prefix>:queue``."""
        return self.counts().queued

    def processing_len(self) -> int:
        """In-flight items: ``LLEN <prefix>:processing`` plus ``ZCARD <prefix>:in_flight`` (SPEC §18)."""
        return self.counts().processing

    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        """Requeue abandoned items (expired leases), examining ``chunk`` entries per script call.

        ``pace_ms`` > 0: do nothing if a paced clean started within ``pace_ms`` (RWQ-CLEAN-007),
        so that cleaners in every worker walk the list once per ``pace_ms`` between them.
        """
        return self._run(ops.light_clean(self.keys, chunk=chunk, pace_ms=pace_ms))

    def deep_clean(self, *, chunk: int = 1000) -> CleanReport:
        """Find orphaned items with SCAN and requeue them; drop ghost ids from both lists."""
        return self._run(ops.deep_clean(self.keys, chunk=chunk))

    def worker_beat(self, worker_id: str, ttl_ms: int, record: Mapping[str, Any]) -> Beat:
        """Register or refresh a live worker until the server's now plus ``ttl_ms``, with its
        record (a JSON object of at most 4096 bytes; profile workers, SPEC §21)."""
        return self._run(live.worker_beat(self.keys, worker_id, ttl_ms, record))

    def worker_leave(self, worker_id: str) -> bool:
        """Remove a worker's entry (a graceful stop); False when it had none."""
        return self._run(live.worker_leave(self.keys, worker_id))

    def workers(self, *, offset: int = 0, count: int = 100) -> list[LiveWorker]:
        """The live workers (deadline after the server's now), earliest deadline first."""
        return self._run(live.workers(self.keys, offset=offset, count=count))

    def enable_stats(self) -> bool:
        """Turn the queue's statistics on (profile stats, SPEC §22; an admin's job): from now on
        the scripts count its events per minute. False when they were on already."""
        return self._run(stats.stats_enable(self.keys))

    def disable_stats(self) -> bool:
        """Turn the queue's statistics off and delete its counts; False when they were off."""
        return self._run(stats.stats_disable(self.keys))

    def stats(self) -> QueueStats:
        """The queue's statistics: per counter, this minute's count and the last 1, 5, 15 and 60
        complete minutes', read at one instant of the server's clock."""
        return self._run(stats.stats(self.keys))

    def put_schedule(self, name: str, schedule: Schedule, data: bytes = b"") -> bool:
        """Create or replace schedule ``name`` with the payload of every item it adds (profile
        periodic, SPEC §23); True when it was created: its first slot is then the first after
        the server's now."""
        return self._run(periodic.put_schedule(self.keys, name, schedule, data))

    def remove_schedule(self, name: str) -> bool:
        """Remove a schedule (its items stay); False when there was none."""
        return self._run(periodic.change_schedule(self.keys, "remove", name))

    def pause_schedule(self, name: str) -> bool:
        """Pause a schedule; False when there is none or it is paused already."""
        return self._run(periodic.change_schedule(self.keys, "pause", name))

    def resume_schedule(self, name: str) -> bool:
        """Resume a paused schedule: no slot of the pause fires; False when it was not paused."""
        return self._run(periodic.change_schedule(self.keys, "resume", name))

    def schedules(self) -> ScheduleList:
        """Every schedule of the queue by name, with the server's now."""
        return self._run(periodic.schedules(self.keys))

    def fire(self, name: str, digest: str, slots: Sequence[int]) -> Fired:
        """Fire ``slots`` (ascending) of schedule ``name``, computed from the definition whose
        SHA1 is ``digest``: what a :class:`~rwq.Scheduler` does."""
        return self._run(periodic.fire(self.keys, name, digest, slots))

    def _run(self, plan: Plan[T]) -> T:
        if self.declared_keys:
            plan = declared.declare(plan, self._windows)
        try:
            command = next(plan)  # a plan validates all of its arguments before its first command
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        if not self._checked:
            self._drive(ops.check_server(self.keys))
            self._checked = True  # only once it passed: a failed check is tried again
        return self._drive(plan, command)

    def _drive(self, plan: Plan[T], command: Command | None = None) -> T:
        try:
            command = next(plan) if command is None else command
            while True:
                try:
                    reply = self._execute(command)
                except RwqError as exc:
                    command = plan.throw(exc)  # the plan may handle it (clean up, map it) or not
                else:
                    command = plan.send(reply)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    def _execute(self, command: Command) -> Any:
        try:
            if isinstance(command, RunScript):
                if not self._cluster:
                    return _shell.run_script_once(self._redis, command)
                try:
                    return _shell.run_script_on_node(self._redis, command)
                except _shell.REDIRECTS:
                    pass  # the slot moved and the script did not run: let the cluster client follow
                if command.wait is not None:  # WAIT must share the script's connection: route anew
                    self._redis.nodes_manager.initialize()
                    return _shell.run_script_on_node(self._redis, command)
                args = _shell.script_args(command)
                try:
                    return self._redis.evalsha(command.script.sha1, *args)
                except NoScriptError:
                    return self._redis.eval(command.script.source, *args)
            kwargs = _shell.call_kwargs(self._redis, command, cluster=self._cluster)
            try:
                reply = self._redis.execute_command(*command.args, **kwargs)
            except _shell.FAILURES as exc:
                if command.errors_as_values and isinstance(exc, ResponseError):
                    return exc
                raise
            return _shell.call_reply(command, reply, cluster=self._cluster)
        except _shell.FAILURES as exc:
            raise _shell.translate(exc) from exc
