"""Mutant: ``release_many`` sends the whole batch in one script call instead of one per 1000
leases, so a batch of 1001 is refused."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease, Outcome, QueueKeys
from rwq.protocol.scripts import registry


def _release(keys: QueueKeys, leases: Sequence[Lease], delay_ms: int) -> Plan[list[Outcome]]:
    args = [part for held in leases for part in (v.encode_id(held.id), v.token(held.token))]
    reply = yield RunScript(registry()["release"], (keys.queue, keys.processing), (delay_ms, *args))
    return [Outcome(code) for code in reply]


class UnchunkedReleaseQueue(WorkQueue):
    def release_many(self, leases: Sequence[Lease], *, delay_ms: int = 0, **options: Any) -> list[Outcome]:
        v.duration_ms(delay_ms, "delay_ms", minimum=0)
        return self._run(_release(self.keys, leases, delay_ms))


if __name__ == "__main__":
    serve(UnchunkedReleaseQueue)
