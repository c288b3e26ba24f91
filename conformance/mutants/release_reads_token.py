"""Mutant: ``release`` sends the token it reads from ``P:lease:<id>`` (GET) instead of the
caller's, as a port that keeps only ids would, so it releases an item another worker now holds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, Outcome, QueueKeys


def _release(keys: QueueKeys, leases: Sequence[Lease], delay_ms: int) -> Plan[list[Outcome]]:
    current: list[Lease] = []
    for held in leases:
        token = yield call(keys, "GET", keys.lease(held.id))
        current.append(Lease(held.id, held.data, token.decode() if token else held.token))
    return (yield from ops.release(keys, current, delay_ms=delay_ms))


class CurrentTokenReleaseQueue(WorkQueue):
    def release(self, lease: Lease, *, delay_ms: int = 0, **options: Any) -> bool:
        return self._run(ops.owned(_release(self.keys, [lease], delay_ms), lease.id))

    def release_many(self, leases: Sequence[Lease], *, delay_ms: int = 0, **options: Any) -> list[Outcome]:
        return self._run(_release(self.keys, leases, delay_ms))


if __name__ == "__main__":
    serve(CurrentTokenReleaseQueue)
