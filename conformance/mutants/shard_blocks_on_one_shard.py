"""Mutant: a blocking lease that found every shard empty waits with ``BLMOVE`` on shard 0, a second
at a time, then visits every shard again: items added to the other shards wait for the step to
end (shard 0 always, so that the cases catch it the same way whatever the rotation's start)."""

from __future__ import annotations

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol.operations import MAX_BLOCK_STEP_MS, Lease
from rwq.protocol.sharding import OnShard, Rotation, ShardLayout, ShardPlan


def _lease(
    layout: ShardLayout, turns: Rotation, lease_ms: int, block: bool, timeout_ms: int
) -> ShardPlan[Lease | None]:
    waited = 0
    while True:
        order = turns.turn()
        for shard in order:
            held, _, _ = yield OnShard(shard, "lease_visit", (lease_ms,))
            if held is not None:
                return held  # type: ignore[no-any-return]
        if not block or (timeout_ms and waited >= timeout_ms):
            return None
        wait = min(MAX_BLOCK_STEP_MS, timeout_ms - waited) if timeout_ms else MAX_BLOCK_STEP_MS
        held = yield OnShard(0, "lease", (lease_ms,), {"block": True, "timeout_ms": wait})
        if held is not None:
            return held  # type: ignore[no-any-return]
        waited += wait


if __name__ == "__main__":
    sharding.lease = _lease
    reference_adapter.main()
