"""Mutant: ``release`` with plain commands (DEL, LREM, EXISTS, LPUSH) that never checks the token,
so a worker that lost its lease still puts the item back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, Outcome, QueueKeys


def _release(keys: QueueKeys, leases: Sequence[Lease]) -> Plan[list[Outcome]]:
    outcomes: list[Outcome] = []
    for held in leases:
        yield call(keys, "DEL", keys.lease(held.id), keys.legacy_lease(held.id))
        yield call(keys, "LREM", keys.processing, -1, v.encode_id(held.id))
        if (yield call(keys, "EXISTS", keys.item(held.id))):
            yield call(keys, "LPUSH", keys.queue, v.encode_id(held.id))
            outcomes.append(Outcome.DONE)
        else:
            outcomes.append(Outcome.GONE)
    return outcomes


class TrustingReleaseQueue(WorkQueue):
    def release(self, lease: Lease, *, delay_ms: int = 0, **options: Any) -> bool:
        return self.release_many([lease], delay_ms=delay_ms)[0] is Outcome.DONE

    def release_many(self, leases: Sequence[Lease], *, delay_ms: int = 0, **options: Any) -> list[Outcome]:
        if delay_ms:
            return super().release_many(leases, delay_ms=delay_ms, **options)
        return self._run(_release(self.keys, leases))


if __name__ == "__main__":
    serve(TrustingReleaseQueue)
