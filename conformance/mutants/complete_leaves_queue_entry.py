"""Mutant: ``complete`` with plain commands that clears the item, its processing entry and both
lease keys, but not a queue entry of the id, so completing a ready item leaves a ghost."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, QueueKeys


def _complete(keys: QueueKeys, item_id: str) -> Plan[bool]:
    deleted = yield call(keys, "DEL", keys.item(item_id))
    yield call(keys, "LREM", keys.processing, -1, v.encode_id(item_id))
    yield call(keys, "DEL", keys.lease(item_id), keys.legacy_lease(item_id))
    return bool(deleted)


class QueueGhostQueue(WorkQueue):
    def complete(self, item: Lease | str, *, require_lease: bool = False) -> bool:
        if require_lease:
            return super().complete(item, require_lease=True)
        return self._run(_complete(self.keys, item.id if isinstance(item, Lease) else item))


if __name__ == "__main__":
    serve(QueueGhostQueue)
