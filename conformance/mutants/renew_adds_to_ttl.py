"""Mutant: ``renew`` extends the lease by ``lease_ms`` beyond its current expiry (PTTL + lease_ms)
instead of setting it to ``lease_ms`` from now."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, QueueKeys


def _renew(keys: QueueKeys, leases: Sequence[Lease], lease_ms: int, legacy: bool) -> Plan[list[bool]]:
    renewed: list[bool] = []
    for held in leases:
        left = yield call(keys, "PTTL", keys.lease(held.id))
        renewed += yield from ops.renew(keys, [held], max(int(left), 0) + lease_ms, legacy=legacy)
    return renewed


class ExtendingRenewQueue(WorkQueue):
    def renew(self, lease: Lease, lease_ms: int) -> bool:
        return self.renew_many([lease], lease_ms)[0]

    def renew_many(self, leases: Sequence[Lease], lease_ms: int) -> list[bool]:
        v.duration_ms(lease_ms, "lease_ms")
        return self._run(_renew(self.keys, leases, lease_ms, self.legacy_lease_key))


if __name__ == "__main__":
    serve(ExtendingRenewQueue)
