"""Mutant: ``renew``/``renew_many`` check the lease time but not the ids and tokens of the leases,
which reach the script unchecked (it refuses them, after I/O)."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease, QueueKeys
from rwq.protocol.scripts import registry


def _renew(keys: QueueKeys, leases: Sequence[Lease], lease_ms: int, legacy: bool) -> Plan[list[bool]]:
    v.duration_ms(lease_ms, "lease_ms")
    pairs = [part for held in leases for part in (held.id.encode("utf-8", "surrogateescape"), held.token)]
    reply = yield RunScript(registry()["renew"], (keys.queue,), (lease_ms, int(legacy), *pairs))
    return [bool(flag) for flag in reply]


class TokenTrustingQueue(WorkQueue):
    def renew(self, lease: Lease, lease_ms: int) -> bool:
        return self.renew_many([lease], lease_ms)[0]

    def renew_many(self, leases: Sequence[Lease], lease_ms: int) -> list[bool]:
        if not 1 <= len(leases) <= v.MAX_BATCH:
            return super().renew_many(leases, lease_ms)
        return self._run(_renew(self.keys, leases, lease_ms, self.legacy_lease_key))


if __name__ == "__main__":
    serve(TokenTrustingQueue)
