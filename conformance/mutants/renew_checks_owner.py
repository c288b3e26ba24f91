"""Mutant: ``renew`` first reads the lease key with ``GET`` and skips the script when the token
differs (check-then-act in the client): right answers alone, a race against other clients."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, QueueKeys


def _renew(keys: QueueKeys, lease: Lease, lease_ms: int, legacy: bool) -> Plan[bool]:
    held = yield call(keys, "GET", keys.lease(lease.id))
    if held != lease.token.encode():
        return False
    return bool((yield from ops.first(ops.renew(keys, [lease], lease_ms, legacy=legacy))))


class CheckingRenewQueue(WorkQueue):
    def renew(self, lease: Lease, lease_ms: int) -> bool:
        v.duration_ms(lease_ms, "lease_ms")
        return self._run(_renew(self.keys, lease, lease_ms, self.legacy_lease_key))


if __name__ == "__main__":
    serve(CheckingRenewQueue)
