"""Mutant: the light cleaner requeues every unleased processing entry, as redis-work-queue's
cleaners do, without checking that its item exists: ghost entries go back to the queue instead
of being dropped."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import CleanReport, QueueKeys


def _light_clean(keys: QueueKeys) -> Plan[CleanReport]:
    raw: list[bytes] = yield call(keys, "LRANGE", keys.processing, 0, -1)
    requeued: list[str] = []
    for entry in reversed(raw):
        item_id = v.decode_id(entry)
        if (yield call(keys, "EXISTS", keys.lease(item_id), keys.legacy_lease(item_id))):
            continue
        yield call(keys, "LREM", keys.processing, -1, entry)
        yield call(keys, "LPUSH", keys.queue, entry)
        requeued.append(item_id)
    return CleanReport(tuple(requeued), 0)


class GhostRequeueingCleanerQueue(WorkQueue):
    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        return self._run(_light_clean(self.keys))


if __name__ == "__main__":
    serve(GhostRequeueingCleanerQueue)
