"""Mutant: ``complete`` by id first checks in the client that ``P:item:<id>`` exists and answers
False without calling the script when it does not, so a delayed item is never cancelled."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, QueueKeys


def _exists(keys: QueueKeys, item_id: str) -> Plan[bool]:
    return bool((yield call(keys, "EXISTS", keys.item(item_id))))


class CheckFirstQueue(WorkQueue):
    def complete(self, item: Lease | str, *, require_lease: bool = False) -> bool:
        item_id = item.id if isinstance(item, Lease) else item
        if not self._run(_exists(self.keys, item_id)):
            return False
        return super().complete(item, require_lease=require_lease)


if __name__ == "__main__":
    serve(CheckFirstQueue)
