"""Mutant: ``release_many`` checks the leases of its first call of 1000 only; later ones are sent
unchecked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease, Outcome, QueueKeys
from rwq.protocol.scripts import registry


def _release(keys: QueueKeys, leases: Sequence[Lease]) -> Plan[list[Outcome]]:
    outcomes: list[Outcome] = []
    for start in range(0, len(leases), v.MAX_BATCH):
        chunk = leases[start : start + v.MAX_BATCH]
        if start == 0:
            for held in chunk:
                v.encode_id(held.id)
                v.token(held.token)
        args = [part for held in chunk for part in (held.id.encode("utf-8", "surrogateescape"), held.token)]
        reply = yield RunScript(registry()["release"], (keys.queue, keys.processing), (0, *args))
        outcomes.extend(Outcome(code) for code in reply)
    return outcomes


class FirstChunkQueue(WorkQueue):
    def release_many(self, leases: Sequence[Lease], *, delay_ms: int = 0, **options: Any) -> list[Outcome]:
        if delay_ms:
            return super().release_many(leases, delay_ms=delay_ms, **options)
        return self._run(_release(self.keys, leases))


if __name__ == "__main__":
    serve(FirstChunkQueue)
