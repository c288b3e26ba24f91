"""Mutant: the client never checks the shard count recorded in shard 0, so clients configured
with different counts route the same id to different shards."""

from __future__ import annotations

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol.commands import Plan
from rwq.protocol.sharding import ShardLayout


def _check_count(layout: ShardLayout) -> Plan[None]:
    return
    yield


if __name__ == "__main__":
    sharding.check_count = _check_count
    reference_adapter.main()
