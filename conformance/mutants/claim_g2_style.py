"""Mutant: after ``BLMOVE`` a blocking lease takes the item with plain commands, as redis-work-queue
0.3 does (``GET`` the payload, ``SET P:lease:<id> PX``), instead of the ``claim`` script: an
item that an older client holds through ``P:leased_by_session:<id>`` is handed out again."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, QueueKeys, lease, new_token


def _blocking(keys: QueueKeys, lease_ms: int, legacy: bool) -> Plan[Lease | None]:
    while True:
        ready = yield from lease(keys, lease_ms, legacy=legacy)
        if ready:
            return ready[0]
        moved = yield call(keys, "BLMOVE", keys.queue, keys.processing, "RIGHT", "LEFT", 1)
        if moved is not None:
            item_id, token = v.decode_id(moved), new_token()
            data = yield call(keys, "GET", keys.item(item_id))
            yield call(keys, "SET", keys.lease(item_id), token, "PX", lease_ms)
            return Lease(item_id, data or b"", token)


class G2ClaimQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        if not block or timeout_ms:
            return super().lease(lease_ms, block=block, timeout_ms=timeout_ms)
        v.duration_ms(lease_ms, "lease_ms")
        return self._run(_blocking(self.keys, lease_ms, self.legacy_lease_key))


if __name__ == "__main__":
    serve(G2ClaimQueue)
