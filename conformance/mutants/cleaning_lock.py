"""Mutant: ``light_clean`` first takes a cleaning lock ``P:cleaning`` (``SET NX PX``), the key
of redis-work-queue 0.1.x's cleaner journal, and lets it expire instead of deleting it."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Plan
from rwq.protocol.operations import CleanReport, QueueKeys, new_token


def _lock(keys: QueueKeys) -> Plan[bool]:
    return bool(
        (yield call(keys, "SET", keys.prefix.encode("utf-8") + b":cleaning", new_token(), "NX", "PX", 60_000))
    )


class CleaningLockQueue(WorkQueue):
    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        self._run(_lock(self.keys))
        return super().light_clean(chunk=chunk)


if __name__ == "__main__":
    serve(CleaningLockQueue)
