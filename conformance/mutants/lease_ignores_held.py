"""Mutant: a plain-command lease (``RPOPLPUSH``, ``GET``, ``SET PX``, as redis-work-queue's G2
clients lease) that skips ghosts but not ids whose lease key exists, so a stray queue entry of a
held item hands it to a second worker."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, QueueKeys, new_token


def _lease(keys: QueueKeys, lease_ms: int) -> Plan[Lease | None]:
    token = new_token()
    while True:
        moved = yield call(keys, "RPOPLPUSH", keys.queue, keys.processing)
        if moved is None:
            return None
        item_id = v.decode_id(moved)
        data = yield call(keys, "GET", keys.item(item_id))
        if data is None:
            yield call(keys, "LREM", keys.processing, 1, moved)
            continue
        yield call(keys, "SET", keys.lease(item_id), token, "PX", lease_ms)
        return Lease(item_id, data, token)


class NoHeldCheckQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        if block:
            return super().lease(lease_ms, block=block, timeout_ms=timeout_ms)
        v.duration_ms(lease_ms, "lease_ms")
        return self._run(_lease(self.keys, lease_ms))


if __name__ == "__main__":
    serve(NoHeldCheckQueue)
