"""Mutant: a non-blocking lease takes the newest ready item (``LMOVE ... LEFT LEFT`` then the
``claim`` script) instead of the oldest."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease, QueueKeys, new_token
from rwq.protocol.scripts import registry


def _lease(keys: QueueKeys, lease_ms: int, legacy: bool) -> Plan[Lease | None]:
    token = new_token()
    while True:
        moved = yield call(keys, "LMOVE", keys.queue, keys.processing, "LEFT", "LEFT")
        if moved is None:
            return None
        claimed = yield RunScript(
            registry()["claim"], (keys.queue, keys.processing), (moved, lease_ms, token, int(legacy), 0)
        )
        if claimed[0] == 1:
            return Lease(v.decode_id(moved), claimed[1], token, claimed[2])


class LifoQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        if block:
            return super().lease(lease_ms, block=block, timeout_ms=timeout_ms)
        v.duration_ms(lease_ms, "lease_ms")
        return self._run(_lease(self.keys, lease_ms, self.legacy_lease_key))


if __name__ == "__main__":
    serve(LifoQueue)
