"""Mutant: ``complete`` with ``require_lease`` sends the token it reads from ``P:lease:<id>`` (GET)
instead of the caller's, as a port that keeps only ids would, so a worker that lost its lease
completes the item another worker now holds."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, Outcome, QueueKeys


def _complete(keys: QueueKeys, leases: Sequence[Lease]) -> Plan[list[Outcome]]:
    current: list[Lease | str] = []
    for held in leases:
        token = yield call(keys, "GET", keys.lease(held.id))
        current.append(Lease(held.id, held.data, token.decode() if token else held.token))
    return (yield from ops.complete(keys, current, require_lease=True))


class CurrentTokenCompleteQueue(WorkQueue):
    def complete(self, item: Lease | str, *, require_lease: bool = False) -> bool:
        if not require_lease or not isinstance(item, Lease):
            return super().complete(item, require_lease=require_lease)
        return self._run(ops.owned(_complete(self.keys, [item]), item.id))

    def complete_many(self, items: Sequence[Lease | str], *, require_lease: bool = False) -> list[Outcome]:
        leases = [item for item in items if isinstance(item, Lease)]
        if not require_lease or len(leases) != len(items):
            return super().complete_many(items, require_lease=require_lease)
        return self._run(_complete(self.keys, leases))


if __name__ == "__main__":
    serve(CurrentTokenCompleteQueue)
