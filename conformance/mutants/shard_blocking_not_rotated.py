"""Mutant: a blocking lease visits the shards from shard 0 every time (only the non-blocking lease
and lease_many rotate), so blocking workers, the usual worker loop, starve shards 1..N-1."""

from __future__ import annotations

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol.operations import Lease
from rwq.protocol.sharding import Rotation, ShardLayout, ShardPlan

_lease = sharding.lease


class _FromZero(Rotation):
    def turn(self) -> list[int]:
        return sharding.rotation(0, self.count)


def _blocking_from_zero(
    layout: ShardLayout, turns: Rotation, lease_ms: int, block: bool, timeout_ms: int
) -> ShardPlan[Lease | None]:
    return (
        yield from _lease(
            layout, _FromZero(turns.count) if block is True else turns, lease_ms, block, timeout_ms
        )
    )


if __name__ == "__main__":
    sharding.lease = _blocking_from_zero
    reference_adapter.main()
