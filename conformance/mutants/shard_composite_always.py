"""Mutant: ``complete_and_lease`` always takes the fast path, the composite script on the shard of
the items it completes, so a consumer keeps leasing from that shard (and gets nothing when it is
empty while others wait)."""

from __future__ import annotations

from collections.abc import Sequence

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol.operations import Lease, Outcome
from rwq.protocol.sharding import OnShard, Rotation, ShardLayout, ShardPlan

_original = sharding.complete_and_lease


def _complete_and_lease(
    layout: ShardLayout,
    turns: Rotation,
    items: Sequence[Lease | str],
    *,
    count: int,
    lease_ms: int,
    require_lease: bool,
) -> ShardPlan[tuple[list[Outcome], list[Lease]]]:
    shards = {layout.shard_of(item.id if isinstance(item, Lease) else item) for item in items}
    if len(shards) == 1:
        method = "complete_and_lease_many"
        kwargs = {"require_lease": require_lease}
        result = yield OnShard(shards.pop(), method, (items, count, lease_ms), kwargs)
        return result  # type: ignore[no-any-return]
    return (
        yield from _original(
            layout, turns, items, count=count, lease_ms=lease_ms, require_lease=require_lease
        )
    )


if __name__ == "__main__":
    sharding.complete_and_lease = _complete_and_lease
    reference_adapter.main()
