"""Mutant: ``fail`` on a queue without a retry policy reads "no policy" as "no retries" and
completes the item (as its holder) instead of giving it back like ``release``."""

from __future__ import annotations

from typing import Any

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Plan
from rwq.protocol.operations import FailOutcome, FailResult, Lease, QueueKeys


def _has_policy(keys: QueueKeys) -> Plan[bool]:
    return bool((yield call(keys, "EXISTS", keys.policy)))


class DropQueue(WorkQueue):
    def fail(self, lease: Lease, reason: str = "", **options: Any) -> FailResult:
        if self._run(_has_policy(self.keys)):
            return super().fail(lease, reason, **options)
        self.complete(lease, require_lease=True)
        return FailResult(FailOutcome.RETRY, 0)


if __name__ == "__main__":
    serve(DropQueue)
