"""Mutant: adds do not ring the doorbell, so a consumer waiting on an empty sharded queue finds a
new item only when its wait step ends (never, while the server's clock stands still)."""

from __future__ import annotations

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol import validation as v
from rwq.protocol.sharding import OnShard, ShardLayout, ShardPlan


def _add(layout: ShardLayout, item_id: str, data: bytes, delay_ms: int) -> ShardPlan[bool]:
    v.encode_new_id(item_id)
    v.payload(data)
    v.duration_ms(delay_ms, "delay_ms", minimum=0)
    return bool((yield OnShard(layout.shard_of(item_id), "add", (item_id, data), {"delay_ms": delay_ms})))


if __name__ == "__main__":
    sharding.add = _add
    reference_adapter.main()
