"""Mutant: ``lease_many`` makes one script call and returns what it got, even when the call
stopped after 1000 skipped entries (``again = 1``); ``lease`` calls again as it must. The Node
port of issue #24 shipped this: with 1,001 ghosts ahead of an item, ``lease_many(2)`` returns
nothing."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease, QueueKeys, new_token
from rwq.protocol.scripts import registry


def _lease_many(keys: QueueKeys, lease_ms: int, count: int, legacy: bool) -> Plan[list[Lease]]:
    token = new_token()
    _again, _now, _due_in, *entries = yield RunScript(
        registry()["lease"], (keys.queue, keys.processing), (lease_ms, token.encode(), count, int(legacy), 0)
    )
    return [Lease(v.decode_id(raw_id), data, token, attempt) for raw_id, data, attempt in entries]


class OneCallManyQueue(WorkQueue):
    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        v.duration_ms(lease_ms, "lease_ms")
        v.batch_size(count, "count")
        return self._run(_lease_many(self.keys, lease_ms, count, self.legacy_lease_key))


if __name__ == "__main__":
    serve(OneCallManyQueue)
