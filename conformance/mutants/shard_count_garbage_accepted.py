"""Mutant: a reply of 0 from the ``shards`` script (the key holds no count) is taken as "nothing
recorded" and the client goes on, as if its own count were the queue's."""

from __future__ import annotations

from rwq.conformance import reference_adapter
from rwq.errors import ShardMismatch
from rwq.protocol import sharding
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import QueueKeys
from rwq.protocol.scripts import registry
from rwq.protocol.sharding import ShardLayout


def _check_count(layout: ShardLayout) -> Plan[None]:
    keys = QueueKeys(layout.prefixes[0])
    recorded = yield RunScript(registry()["shards"], (keys.queue,), (layout.count,))
    if recorded not in (0, layout.count):
        raise ShardMismatch(f"{recorded} shards recorded")


if __name__ == "__main__":
    sharding.check_count = _check_count
    reference_adapter.main()
