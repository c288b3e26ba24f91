"""Mutant: a release rings the doorbell even when it delays the item, waking consumers for an
item that is not ready."""

from __future__ import annotations

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol.operations import Lease
from rwq.protocol.sharding import OnShard, ShardLayout, ShardPlan


def _release(
    layout: ShardLayout, held: Lease, delay_ms: int, refund_attempt: bool = False
) -> ShardPlan[bool]:
    options = {"delay_ms": delay_ms, "refund_attempt": refund_attempt}
    released = bool((yield OnShard(layout.shard_of(held.id), "release", (held,), options)))
    yield from sharding.ring(layout, int(released))
    return released


if __name__ == "__main__":
    sharding.release = _release
    reference_adapter.main()
