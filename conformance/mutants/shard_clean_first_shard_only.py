"""Mutant: ``light_clean`` cleans shard 0 only (the shard whose key names the queue)."""

from __future__ import annotations

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol.operations import CleanReport
from rwq.protocol.sharding import OnShard, ShardLayout, ShardPlan


def _light_clean(layout: ShardLayout, chunk: int, pace_ms: int) -> ShardPlan[CleanReport]:
    return (yield OnShard(0, "light_clean", (), {"chunk": chunk, "pace_ms": pace_ms}))  # type: ignore[no-any-return]


if __name__ == "__main__":
    sharding.light_clean = _light_clean
    reference_adapter.main()
