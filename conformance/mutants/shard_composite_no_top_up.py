"""Mutant: ``complete_and_lease`` on the shard next in turn returns what the composite script
leased there and no more, even while the other shards hold items (the preview's fast path)."""

from __future__ import annotations

from collections.abc import Sequence

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol.operations import Lease, Outcome
from rwq.protocol.sharding import OnShard, Rotation, ShardLayout, ShardPlan

_original = sharding.complete_and_lease


def _no_top_up(
    layout: ShardLayout,
    turns: Rotation,
    items: Sequence[Lease | str],
    *,
    count: int,
    lease_ms: int,
    require_lease: bool,
) -> ShardPlan[tuple[list[Outcome], list[Lease]]]:
    shards = {layout.shard_of(item.id if isinstance(item, Lease) else item) for item in items}
    if shards == {turns.next}:
        kwargs = {"require_lease": require_lease}
        result = yield OnShard(turns.turn()[0], "complete_and_lease_many", (items, count, lease_ms), kwargs)
        return result  # type: ignore[no-any-return]
    return (
        yield from _original(
            layout, turns, items, count=count, lease_ms=lease_ms, require_lease=require_lease
        )
    )


if __name__ == "__main__":
    sharding.complete_and_lease = _no_top_up
    reference_adapter.main()
