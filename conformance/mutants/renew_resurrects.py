"""Mutant: ``renew`` with plain commands that sets the lease again when its key has expired (GET,
EXISTS, then SET PX), so an expired lease comes back to life."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, QueueKeys


def _renew(keys: QueueKeys, leases: Sequence[Lease], lease_ms: int) -> Plan[list[bool]]:
    renewed: list[bool] = []
    for held in leases:
        holder = yield call(keys, "GET", keys.lease(held.id))
        alive = holder in (None, held.token.encode()) and (yield call(keys, "EXISTS", keys.item(held.id)))
        if alive:
            yield call(keys, "SET", keys.lease(held.id), held.token, "PX", lease_ms)
        renewed.append(bool(alive))
    return renewed


class ResurrectingRenewQueue(WorkQueue):
    def renew(self, lease: Lease, lease_ms: int) -> bool:
        return self.renew_many([lease], lease_ms)[0]

    def renew_many(self, leases: Sequence[Lease], lease_ms: int) -> list[bool]:
        v.duration_ms(lease_ms, "lease_ms")
        return self._run(_renew(self.keys, leases, lease_ms))


if __name__ == "__main__":
    serve(ResurrectingRenewQueue)
