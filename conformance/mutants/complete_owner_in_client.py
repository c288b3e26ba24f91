"""Mutant: ``complete`` with ``require_lease`` checks the lease token with a GET in the client,
then completes in "any" mode: another client can take the lease between the two."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, Outcome, QueueKeys


def _complete(keys: QueueKeys, leases: Sequence[Lease]) -> Plan[list[Outcome]]:
    held: list[bool] = []
    for lease in leases:
        held.append((yield call(keys, "GET", keys.lease(lease.id))) == lease.token.encode())
    mine = [lease for lease, ok in zip(leases, held, strict=True) if ok]
    done = iter((yield from ops.complete(keys, mine)) if mine else [])
    return [next(done) if ok else Outcome.LEASE_LOST for ok in held]


class ClientCheckedCompleteQueue(WorkQueue):
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
    serve(ClientCheckedCompleteQueue)
