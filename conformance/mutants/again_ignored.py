"""Mutant: a lease ignores the script's ``again`` flag and reports an empty queue when one call
skipped 1000 ghosts or stray entries without finding an item."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease, QueueKeys, new_token
from rwq.protocol.scripts import registry


def _lease(keys: QueueKeys, lease_ms: int, count: int, legacy: bool) -> Plan[list[Lease]]:
    token = new_token()
    _again, _now, _due_in, *entries = yield RunScript(
        registry()["lease"], (keys.queue, keys.processing), (lease_ms, token.encode(), count, int(legacy), 0)
    )
    return [Lease(v.decode_id(raw_id), data, token, attempt) for raw_id, data, attempt in entries]


class OneCallQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        if block:
            return super().lease(lease_ms, block=block, timeout_ms=timeout_ms)
        leases = self.lease_many(1, lease_ms)
        return leases[0] if leases else None

    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        v.duration_ms(lease_ms, "lease_ms")
        v.batch_size(count, "count")
        return self._run(_lease(self.keys, lease_ms, count, self.legacy_lease_key))


if __name__ == "__main__":
    serve(OneCallQueue)
