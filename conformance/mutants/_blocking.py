"""The reference blocking lease (``operations.lease`` with ``block=True``), one method per step,
so that a mutant of the blocking path overrides exactly the step its port gets wrong.

:func:`blocking_queue` makes the :class:`~rwq.client.WorkQueue` that runs a given step class for
blocking leases and the reference for everything else.
"""

from __future__ import annotations

from typing import Any

from _mutant import call
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Call, Plan, RunScript
from rwq.protocol.operations import MAX_BLOCK_STEP_MS, Lease, QueueKeys, new_token
from rwq.protocol.scripts import registry


class Blocking:
    """One blocking lease: lease script, then BLMOVE and claim until an item or the deadline."""

    def __init__(self, keys: QueueKeys, lease_ms: int, timeout_ms: int, legacy: bool) -> None:
        self.keys, self.lease_ms, self.timeout_ms = keys, lease_ms, timeout_ms
        self.legacy = b"1" if legacy else b"0"
        self.token = new_token()
        self.deadline: int | None = None
        self.now = 0

    @property
    def both(self) -> tuple[bytes, bytes]:
        return self.keys.queue, self.keys.processing

    def lease_script(self) -> Plan[list[Any]]:
        """One call of the lease script; its reply ``[again, now, due_in, entries...]``."""
        reply: list[Any] = yield RunScript(
            registry()["lease"], self.both, (self.lease_ms, self.token.encode(), 1, self.legacy, b"0")
        )
        return reply

    def first_step(self) -> Plan[list[Any]]:
        """The non-blocking lease that starts every blocking lease (RWQ-LEASE-008)."""
        return (yield from self.lease_script())

    def after_timeout(self, wait_ms: int) -> Plan[list[Any]]:
        """What follows a BLMOVE that timed out: the first step again (RWQ-LEASE-012)."""
        return (yield from self.lease_script())

    def update_deadline(self, now: int) -> None:
        """The deadline, from the first lease call's server time (RWQ-LEASE-010)."""
        if self.deadline is None and self.timeout_ms:
            self.deadline = now + self.timeout_ms

    def expired(self, now: int) -> bool:
        """Whether the timeout has passed: the server time reached the deadline."""
        return self.deadline is not None and now >= self.deadline

    def wait_ms(self, now: int, due_in: int) -> int:
        """At most a second, less when the deadline or the next delayed item is nearer."""
        wait_ms = MAX_BLOCK_STEP_MS
        if self.deadline is not None:
            wait_ms = min(wait_ms, self.deadline - now)
        if due_in >= 0:
            wait_ms = max(min(wait_ms, due_in), 1)
        return wait_ms

    def blmove(self, wait_ms: int) -> Call:
        return call(
            self.keys, "BLMOVE", self.keys.queue, self.keys.processing, "RIGHT", "LEFT", wait_ms / 1000
        )

    def after_move(self, moved: bytes) -> Plan[Lease | None]:
        """Claim the id BLMOVE moved; None when claim refuses."""
        claimed = yield RunScript(
            registry()["claim"], self.both, (moved, self.lease_ms, self.token.encode(), self.legacy, b"0")
        )
        if claimed[0] == 1:
            return Lease(v.decode_id(moved), claimed[1], self.token, claimed[2])
        return None

    def refused(self, moved: bytes) -> Plan[bool]:
        """After claim refused ``moved``: go on waiting (True) within the same deadline (RWQ-LEASE-009)."""
        return True
        yield  # a plan that sends nothing

    def plan(self) -> Plan[Lease | None]:
        reply = yield from self.first_step()
        while True:
            again, now, due_in, *entries = reply
            self.now = now
            self.update_deadline(now)
            if entries:
                raw_id, data, attempt = entries[0]
                return Lease(v.decode_id(raw_id), data, self.token, attempt)
            if again:
                reply = yield from self.lease_script()
                continue
            if self.expired(now):
                return None
            wait_ms = self.wait_ms(now, due_in)
            moved = yield self.blmove(wait_ms)
            if moved is None:
                reply = yield from self.after_timeout(wait_ms)
                continue
            leased = yield from self.after_move(moved)
            if leased is not None:
                return leased
            if not (yield from self.refused(moved)):
                return None
            reply = yield from self.lease_script()


def blocking_queue(steps: type[Blocking]) -> type[WorkQueue]:
    """A WorkQueue whose blocking leases run ``steps``; everything else is the reference."""

    class BlockingQueue(WorkQueue):
        def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
            if not block:
                return super().lease(lease_ms)
            v.duration_ms(lease_ms, "lease_ms")
            v.duration_ms(timeout_ms, "timeout_ms", minimum=0)
            return self._run(steps(self.keys, lease_ms, timeout_ms, self.legacy_lease_key).plan())

    return BlockingQueue
