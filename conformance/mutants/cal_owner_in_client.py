"""Mutant: ``complete_and_lease`` with ``require_lease`` checks the tokens with GETs in the client,
then completes the held items in "any" mode: another client can take a lease in between."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, Outcome, QueueKeys


def _complete_and_lease(
    keys: QueueKeys, leases: Sequence[Lease], count: int, lease_ms: int
) -> Plan[tuple[list[Outcome], list[Lease]]]:
    held: list[bool] = []
    for lease in leases:
        held.append((yield call(keys, "GET", keys.lease(lease.id))) == lease.token.encode())
    mine = [lease.id for lease, ok in zip(leases, held, strict=True) if ok]
    if not mine:
        return [Outcome.LEASE_LOST] * len(leases), (yield from ops.lease(keys, lease_ms, count=count))
    completed, granted = yield from ops.complete_and_lease(keys, mine, lease_ms, count=count)
    done = iter(completed)
    return [next(done) if ok else Outcome.LEASE_LOST for ok in held], granted


class ClientCheckedCompositeQueue(WorkQueue):
    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        leases = [item for item in items if isinstance(item, Lease)]
        if not require_lease or not items or len(leases) != len(items):
            return super().complete_and_lease_many(items, count, lease_ms, require_lease=require_lease)
        return self._run(_complete_and_lease(self.keys, leases, count, lease_ms))


if __name__ == "__main__":
    serve(ClientCheckedCompositeQueue)
