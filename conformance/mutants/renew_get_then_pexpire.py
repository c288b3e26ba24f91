"""Mutant: ``renew`` checks the token with a GET in the client, then extends the key with
``PEXPIRE``: no check that the item still exists, and another client can act in between."""

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
        mine = holder == held.token.encode()
        if mine:
            yield call(keys, "PEXPIRE", keys.lease(held.id), lease_ms)
        renewed.append(mine)
    return renewed


class CheckThenRenewQueue(WorkQueue):
    def renew(self, lease: Lease, lease_ms: int) -> bool:
        return self.renew_many([lease], lease_ms)[0]

    def renew_many(self, leases: Sequence[Lease], lease_ms: int) -> list[bool]:
        v.duration_ms(lease_ms, "lease_ms")
        return self._run(_renew(self.keys, leases, lease_ms))


if __name__ == "__main__":
    serve(CheckThenRenewQueue)
