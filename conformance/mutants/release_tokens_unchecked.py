"""Mutant: ``release``/``release_many`` check the delay but send the leases' ids and tokens
unchecked; the script refuses a bad one, but only after the call went to Redis."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease, Outcome, QueueKeys, owned
from rwq.protocol.scripts import registry


def _release(keys: QueueKeys, leases: Sequence[Lease], delay_ms: int) -> Plan[list[Outcome]]:
    v.duration_ms(delay_ms, "delay_ms", minimum=0)
    pairs = [part for held in leases for part in (held.id.encode("utf-8", "surrogateescape"), held.token)]
    reply = yield RunScript(registry()["release"], (keys.queue, keys.processing), (delay_ms, *pairs))
    return [Outcome(code) for code in reply]


class TokenTrustingReleaseQueue(WorkQueue):
    def release(self, lease: Lease, *, delay_ms: int = 0, **options: Any) -> bool:
        return self._run(owned(_release(self.keys, [lease], delay_ms), lease.id))

    def release_many(self, leases: Sequence[Lease], *, delay_ms: int = 0, **options: Any) -> list[Outcome]:
        if not 1 <= len(leases) <= v.MAX_BATCH:
            return super().release_many(leases, delay_ms=delay_ms, **options)
        return self._run(_release(self.keys, leases, delay_ms))


if __name__ == "__main__":
    serve(TokenTrustingReleaseQueue)
