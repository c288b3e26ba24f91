"""Mutant: ``lease_many`` calls again after ``again = 1`` as it must, but draws a fresh token for
each script call, so one call's leases carry two tokens (RWQ-ENC-008, RWQ-LEASE-006)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease, QueueKeys, new_token
from rwq.protocol.scripts import registry


def _lease_many(keys: QueueKeys, lease_ms: int, count: int, legacy: bool) -> Plan[list[Lease]]:
    leased: list[Lease] = []
    while True:
        token = new_token()
        args = (lease_ms, token.encode(), count - len(leased), int(legacy), 0)
        reply = yield RunScript(registry()["lease"], (keys.queue, keys.processing), args)
        again, _now, _due_in, *entries = reply
        leased += [Lease(v.decode_id(raw_id), data, token, attempt) for raw_id, data, attempt in entries]
        if len(leased) == count or not again:
            return leased


class TokenPerCallQueue(WorkQueue):
    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        v.duration_ms(lease_ms, "lease_ms")
        v.batch_size(count, "count")
        return self._run(_lease_many(self.keys, lease_ms, count, self.legacy_lease_key))


if __name__ == "__main__":
    serve(TokenPerCallQueue)
