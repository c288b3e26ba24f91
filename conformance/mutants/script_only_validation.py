"""Mutant: ``lease`` leaves its checks to the script: a lease_ms out of range is sent to Redis,
and the script's refusal comes back as INVALID_ARGUMENT (right answer, but after I/O)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease, QueueKeys, _leases, new_token
from rwq.protocol.scripts import registry


def _lease(keys: QueueKeys, lease_ms: int, count: int, legacy: bool) -> Plan[list[Lease]]:
    token = new_token()
    while True:
        again, _now, _due, *entries = yield RunScript(
            registry()["lease"], (keys.queue, keys.processing), (lease_ms, token, count, int(legacy), 0)
        )
        if entries or not again:
            return _leases(entries, token)


class ScriptChecksQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        if block:
            return super().lease(lease_ms, block=block, timeout_ms=timeout_ms)
        leases = self._run(_lease(self.keys, lease_ms, 1, self.legacy_lease_key))
        return leases[0] if leases else None


if __name__ == "__main__":
    serve(ScriptChecksQueue)
