"""Shared part of the dead-letter retention mutants: a ``WorkQueue`` whose ``light_clean`` and
``fail`` run a given trim plan in place of the reference's loop (RWQ-RETRY-011)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Plan
from rwq.protocol.operations import CleanReport, FailResult, Lease, QueueKeys

Trim = Callable[[QueueKeys], Plan[None]]
T = TypeVar("T")


def no_trim(keys: QueueKeys) -> Plan[None]:
    """A trim that sends nothing."""
    return
    yield  # a plan that sends nothing


def trim_queue(after_clean: Trim, after_fail: Trim) -> type[WorkQueue]:
    """The reference with ``after_clean`` and ``after_fail`` as the trims of ``light_clean`` and
    ``fail``."""

    def swapped(plan: Plan[T], trim: Trim) -> Plan[T]:
        saved = ops._trim_dead
        vars(ops)["_trim_dead"] = trim
        try:
            return (yield from plan)
        finally:
            vars(ops)["_trim_dead"] = saved

    class TrimQueue(WorkQueue):
        def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
            return self._run(swapped(ops.light_clean(self.keys, chunk=chunk), after_clean))

        def fail(self, lease: Lease, reason: str = "", **options: Any) -> FailResult:
            return self._run(swapped(ops.fail(self.keys, lease, reason), after_fail))

    return TrimQueue
