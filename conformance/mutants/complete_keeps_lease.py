"""Mutant: ``complete`` deletes the item and its processing entry with plain commands and leaves
the lease keys behind."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, QueueKeys


def _complete(keys: QueueKeys, item_id: str) -> Plan[bool]:
    deleted = yield call(keys, "DEL", keys.item(item_id))
    yield call(keys, "LREM", keys.processing, 1, v.encode_id(item_id))
    return bool(deleted)


class LeakyCompleteQueue(WorkQueue):
    def complete(self, item: Lease | str, *, require_lease: bool = False) -> bool:
        if require_lease:
            return super().complete(item, require_lease=True)
        return self._run(_complete(self.keys, item.id if isinstance(item, Lease) else item))


if __name__ == "__main__":
    serve(LeakyCompleteQueue)
