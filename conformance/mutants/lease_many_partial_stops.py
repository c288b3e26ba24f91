"""Mutant: ``lease_many`` calls again after ``again = 1`` only while it has leased nothing, and
returns a partial result as soon as a call that stopped after 1000 skipped entries brought one
item (RWQ-LEASE-015)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease, QueueKeys, new_token
from rwq.protocol.scripts import registry


def _lease_many(keys: QueueKeys, lease_ms: int, count: int, legacy: bool) -> Plan[list[Lease]]:
    token = new_token()
    leased: list[Lease] = []
    while True:
        args = (lease_ms, token.encode(), count - len(leased), int(legacy), 0)
        reply = yield RunScript(registry()["lease"], (keys.queue, keys.processing), args)
        again, _now, _due_in, *entries = reply
        leased += [Lease(v.decode_id(raw_id), data, token, attempt) for raw_id, data, attempt in entries]
        if leased or not again:
            return leased


class PartialManyQueue(WorkQueue):
    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        v.duration_ms(lease_ms, "lease_ms")
        v.batch_size(count, "count")
        return self._run(_lease_many(self.keys, lease_ms, count, self.legacy_lease_key))


if __name__ == "__main__":
    serve(PartialManyQueue)
