"""Mutant: ``renew`` sends the token it reads from ``P:lease:<id>`` (GET) instead of the caller's,
as a port that keeps only ids would, so it renews a lease another worker now holds."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, QueueKeys


def _renew(keys: QueueKeys, leases: Sequence[Lease], lease_ms: int, legacy: bool) -> Plan[list[bool]]:
    current: list[Lease] = []
    for held in leases:
        token = yield call(keys, "GET", keys.lease(held.id))
        current.append(Lease(held.id, held.data, token.decode() if token else held.token))
    return (yield from ops.renew(keys, current, lease_ms, legacy=legacy))


class CurrentTokenRenewQueue(WorkQueue):
    def renew(self, lease: Lease, lease_ms: int) -> bool:
        return self.renew_many([lease], lease_ms)[0]

    def renew_many(self, leases: Sequence[Lease], lease_ms: int) -> list[bool]:
        v.duration_ms(lease_ms, "lease_ms")
        return self._run(_renew(self.keys, leases, lease_ms, self.legacy_lease_key))


if __name__ == "__main__":
    serve(CurrentTokenRenewQueue)
