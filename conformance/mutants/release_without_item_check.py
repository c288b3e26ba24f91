"""Mutant: ``release`` with plain commands that checks the token (GET) but not that the item still
exists, so releasing an item deleted under its lease pushes a ghost and reports it released."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.errors import LeaseLost
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, Outcome, QueueKeys


def _release(keys: QueueKeys, leases: Sequence[Lease]) -> Plan[list[Outcome]]:
    outcomes: list[Outcome] = []
    for held in leases:
        if (yield call(keys, "GET", keys.lease(held.id))) != held.token.encode():
            outcomes.append(Outcome.LEASE_LOST)
            continue
        yield call(keys, "DEL", keys.lease(held.id), keys.legacy_lease(held.id))
        yield call(keys, "LREM", keys.processing, -1, v.encode_id(held.id))
        yield call(keys, "LPUSH", keys.queue, v.encode_id(held.id))
        outcomes.append(Outcome.DONE)
    return outcomes


class UncheckedItemReleaseQueue(WorkQueue):
    def release(self, lease: Lease, *, delay_ms: int = 0, **options: Any) -> bool:
        (outcome,) = self.release_many([lease], delay_ms=delay_ms)
        if outcome is Outcome.LEASE_LOST:
            raise LeaseLost(f"the lease on {lease.id!r} is no longer held by this caller")
        return outcome is Outcome.DONE

    def release_many(self, leases: Sequence[Lease], *, delay_ms: int = 0, **options: Any) -> list[Outcome]:
        if delay_ms:
            return super().release_many(leases, delay_ms=delay_ms, **options)
        return self._run(_release(self.keys, leases))


if __name__ == "__main__":
    serve(UncheckedItemReleaseQueue)
