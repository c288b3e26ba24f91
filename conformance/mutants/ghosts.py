"""Mutant: a plain-command lease (``RPOPLPUSH``, ``GET``, ``SET PX``) that does not check that
the item exists, so ghost ids are handed out with an empty payload."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, QueueKeys, new_token


def _lease(keys: QueueKeys, lease_ms: int) -> Plan[Lease | None]:
    moved = yield call(keys, "RPOPLPUSH", keys.queue, keys.processing)
    if moved is None:
        return None
    item_id, token = v.decode_id(moved), new_token()
    data = yield call(keys, "GET", keys.item(item_id))
    yield call(keys, "SET", keys.lease(item_id), token, "PX", lease_ms)
    return Lease(item_id, data or b"", token)


class GhostQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        if block:
            return super().lease(lease_ms, block=block, timeout_ms=timeout_ms)
        v.duration_ms(lease_ms, "lease_ms")
        return self._run(_lease(self.keys, lease_ms))


if __name__ == "__main__":
    serve(GhostQueue)
