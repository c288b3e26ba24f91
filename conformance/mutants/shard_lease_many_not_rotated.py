"""Mutant: ``lease_many`` starts from the client's current shard but does not advance it (only
``lease`` does), so batch consumers drain one shard before the next."""

from __future__ import annotations

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease
from rwq.protocol.sharding import OnShard, Rotation, ShardLayout, ShardPlan, rotation


def _lease_many(layout: ShardLayout, turns: Rotation, count: int, lease_ms: int) -> ShardPlan[list[Lease]]:
    v.batch_size(count, "count")
    v.duration_ms(lease_ms, "lease_ms")
    leased: list[Lease] = []
    for shard in rotation(turns.next, turns.count):
        leased += yield OnShard(shard, "lease_many", (count - len(leased), lease_ms))
        if len(leased) == count:
            break
    return leased


if __name__ == "__main__":
    sharding.lease_many = _lease_many
    reference_adapter.main()
