"""Mutant: ``renew`` extends the lease key with ``PEXPIRE`` without checking the token, so a
worker whose item went to another worker still "renews" it."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, QueueKeys


def _renew(keys: QueueKeys, item_id: str, lease_ms: int) -> Plan[bool]:
    return bool((yield call(keys, "PEXPIRE", keys.lease(item_id), lease_ms)))


class TrustingRenewQueue(WorkQueue):
    def renew(self, lease: Lease, lease_ms: int) -> bool:
        v.duration_ms(lease_ms, "lease_ms")
        return self._run(_renew(self.keys, lease.id, lease_ms))


if __name__ == "__main__":
    serve(TrustingRenewQueue)
