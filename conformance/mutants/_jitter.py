"""Shared part of the jitter mutants: ``fail`` with the random integer drawn by a given function.

RWQ-RETRY-004 has the client draw ``r`` uniformly from 0..999,999 for every ``fail``; the script
shortens the delay by ``floor(delay * jitter_pct * r / 10^8)``. A port's jitter bugs all live in
that draw, so each jitter mutant is :func:`jitter_queue` with its own wrong ``draw``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rwq.client import WorkQueue
from rwq.errors import InvalidArgument, LeaseLost
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import FailOutcome, FailResult, Lease, QueueKeys, _trim_dead
from rwq.protocol.scripts import registry


def _fail(keys: QueueKeys, held: Lease, reason: str, random: int) -> Plan[FailResult]:
    if len(reason.encode("utf-8", "replace")) > 1024:
        raise InvalidArgument("reason must be at most 1024 bytes")
    args = (v.encode_id(held.id), v.token(held.token), reason.encode("utf-8", "replace"), random)
    status, delay = yield RunScript(registry()["fail"], (keys.queue, keys.processing), args)
    if status == -1:
        raise LeaseLost(f"the lease on {held.id!r} is no longer held by this caller")
    if status == 2:
        yield from _trim_dead(keys)
    return FailResult(FailOutcome(status), int(delay))


def jitter_queue(draw: Callable[[], int]) -> type[WorkQueue]:
    """A :class:`WorkQueue` whose ``fail`` sends ``draw()`` as the jitter's random integer."""

    class JitterQueue(WorkQueue):
        def fail(self, lease: Lease, reason: str = "", **options: Any) -> FailResult:
            return self._run(_fail(self.keys, lease, reason, draw()))

    return JitterQueue
