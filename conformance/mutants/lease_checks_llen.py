"""Mutant: a non-blocking ``lease`` first asks ``LLEN P:queue`` and skips the script when it is 0
(a "cheap" check in the client, which races with every other client and costs a round trip)."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease, QueueKeys


def _llen(keys: QueueKeys) -> Plan[int]:
    return int((yield call(keys, "LLEN", keys.queue)))


class LlenFirstQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        v.duration_ms(lease_ms, "lease_ms")
        if not block and not self._run(_llen(self.keys)):
            return None
        return super().lease(lease_ms, block=block, timeout_ms=timeout_ms)


if __name__ == "__main__":
    serve(LlenFirstQueue)
