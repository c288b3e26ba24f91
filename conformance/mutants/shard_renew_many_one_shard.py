"""Mutant: ``renew_many`` sends the whole batch to the shard of its first lease, so the leases of
the other shards are reported lost and expire while their workers still run."""

from __future__ import annotations

from collections.abc import Sequence

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol.operations import Lease
from rwq.protocol.sharding import OnShard, ShardLayout, ShardPlan


def _renew_many(layout: ShardLayout, leases: Sequence[Lease], lease_ms: int) -> ShardPlan[list[bool]]:
    held = list(leases)
    renewed = yield OnShard(layout.shard_of(held[0].id), "renew_many", (held,), {"lease_ms": lease_ms})
    return list(renewed)


if __name__ == "__main__":
    sharding.renew_many = _renew_many
    reference_adapter.main()
