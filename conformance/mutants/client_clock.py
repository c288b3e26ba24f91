"""Mutant: a blocking lease measures its timeout on the client's clock, not the server's."""

from __future__ import annotations

import time

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease, QueueKeys, new_token
from rwq.protocol.scripts import registry


def _blocking(keys: QueueKeys, lease_ms: int, timeout_ms: int, legacy: bool) -> Plan[Lease | None]:
    token, both = new_token(), (keys.queue, keys.processing)
    deadline = time.monotonic() + timeout_ms / 1000 if timeout_ms else float("inf")
    while True:
        again, _now, _due, *entries = yield RunScript(
            registry()["lease"], both, (lease_ms, token, 1, int(legacy), 0)
        )
        if entries:
            raw_id, data, attempt = entries[0]
            return Lease(v.decode_id(raw_id), data, token, attempt)
        remaining = deadline - time.monotonic()
        if again:
            continue
        if remaining <= 0:
            return None
        moved = yield call(
            keys, "BLMOVE", keys.queue, keys.processing, "RIGHT", "LEFT", round(min(remaining, 1.0), 3)
        )
        if moved is not None:
            claimed = yield RunScript(registry()["claim"], both, (moved, lease_ms, token, int(legacy), 0))
            if claimed[0] == 1:
                return Lease(v.decode_id(moved), claimed[1], token, claimed[2])


class ClientClockQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        if not block:
            return super().lease(lease_ms)
        v.duration_ms(lease_ms, "lease_ms")
        v.duration_ms(timeout_ms, "timeout_ms", minimum=0)
        return self._run(_blocking(self.keys, lease_ms, timeout_ms, self.legacy_lease_key))


if __name__ == "__main__":
    serve(ClientClockQueue)
