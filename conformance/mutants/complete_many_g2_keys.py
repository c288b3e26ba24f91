"""Mutant: ``complete_many`` with plain commands, as redis-work-queue 0.3 completes (``DEL`` the
item, ``LREM`` processing, ``DEL P:lease:<id>``): the legacy lease key of each item is left."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, Outcome, QueueKeys


def _complete(keys: QueueKeys, ids: list[str]) -> Plan[list[Outcome]]:
    outcomes: list[Outcome] = []
    for item_id in ids:
        deleted = yield call(keys, "DEL", keys.item(item_id))
        yield call(keys, "LREM", keys.processing, 1, v.encode_id(item_id))
        yield call(keys, "DEL", keys.lease(item_id))
        outcomes.append(Outcome.DONE if deleted else Outcome.GONE)
    return outcomes


class G2CompleteManyQueue(WorkQueue):
    def complete_many(self, items: Sequence[Lease | str], *, require_lease: bool = False) -> list[Outcome]:
        if require_lease:
            return super().complete_many(items, require_lease=True)
        return self._run(
            _complete(self.keys, [item.id if isinstance(item, Lease) else item for item in items])
        )


if __name__ == "__main__":
    serve(G2CompleteManyQueue)
