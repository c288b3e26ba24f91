"""Mutant (red team, RWQ-ERR-002, RWQ-LEASE-013): the sharded ``lease_many`` leaves the count's
range to the shard's own call, so a new client's ``lease_many(1001)`` first runs the ``shards``
script, which records the count (a write), and only then is refused."""

from __future__ import annotations

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease
from rwq.protocol.sharding import OnShard, Rotation, ShardLayout, ShardPlan


def _lease_many(layout: ShardLayout, turns: Rotation, count: int, lease_ms: int) -> ShardPlan[list[Lease]]:
    v.duration_ms(lease_ms, "lease_ms")  # count unchecked: each shard's lease_many checks it
    leased: list[Lease] = []
    for shard in turns.turn():
        leased += yield OnShard(shard, "lease_many", (), {"count": count - len(leased), "lease_ms": lease_ms})
        if len(leased) == count:
            break
    return leased


if __name__ == "__main__":
    sharding.lease_many = _lease_many
    reference_adapter.main()
