"""Mutant: ``counts`` of a sharded queue reads shard 0 only."""

from __future__ import annotations

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol.operations import Counts
from rwq.protocol.sharding import OnShard, ShardLayout, ShardPlan


def _counts(layout: ShardLayout) -> ShardPlan[Counts]:
    return (yield OnShard(0, "counts"))  # type: ignore[no-any-return]


if __name__ == "__main__":
    sharding.counts = _counts
    reference_adapter.main()
