"""Mutant: ``release`` puts the item back at the front of the queue (``RPUSH``), ahead of the
items already waiting, instead of at the back."""

from __future__ import annotations

from typing import Any

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.errors import LeaseLost
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, QueueKeys


def _release(keys: QueueKeys, lease: Lease) -> Plan[bool]:
    token = yield call(keys, "GET", keys.lease(lease.id))
    if token != lease.token.encode():
        raise LeaseLost(f"the lease on {lease.id!r} is no longer held by this caller")
    raw = v.encode_id(lease.id)
    yield call(keys, "DEL", keys.lease(lease.id))
    yield call(keys, "LREM", keys.processing, 1, raw)
    yield call(keys, "RPUSH", keys.queue, raw)
    return True


class FrontReleaseQueue(WorkQueue):
    def release(self, lease: Lease, *, delay_ms: int = 0, **options: Any) -> bool:
        if delay_ms:
            return super().release(lease, delay_ms=delay_ms, **options)
        return self._run(_release(self.keys, lease))


if __name__ == "__main__":
    serve(FrontReleaseQueue)
