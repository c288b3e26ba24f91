"""Mutant: ``lease_many`` as a loop of plain commands (``RPOPLPUSH``, ``GET``, ``SET PX``) "to
batch them", which hands out ghost ids with an empty payload; the single lease is the script."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, QueueKeys, new_token


def _lease_many(keys: QueueKeys, count: int, lease_ms: int) -> Plan[list[Lease]]:
    token, leases = new_token(), list[Lease]()
    while len(leases) < count:
        moved = yield call(keys, "RPOPLPUSH", keys.queue, keys.processing)
        if moved is None:
            break
        item_id = v.decode_id(moved)
        data = yield call(keys, "GET", keys.item(item_id))
        yield call(keys, "SET", keys.lease(item_id), token, "PX", lease_ms)
        leases.append(Lease(item_id, data or b"", token))
    return leases


class PlainBatchQueue(WorkQueue):
    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        v.duration_ms(lease_ms, "lease_ms")
        v.batch_size(count, "count")
        return self._run(_lease_many(self.keys, count, lease_ms))


if __name__ == "__main__":
    serve(PlainBatchQueue)
