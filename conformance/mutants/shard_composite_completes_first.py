"""Mutant (red team's TypeScript variant, RWQ-SHARD-005, RWQ-SEC-006): the sharded
``complete_and_lease`` completes the other shards' items before its first lease call, so a call
whose lease is refused (a role that may not lease, a key of another type) has completed them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease, Outcome
from rwq.protocol.sharding import OnShard, Rotation, ShardLayout, ShardPlan, group, scatter


def _completes_first(
    layout: ShardLayout,
    turns: Rotation,
    items: Sequence[Lease | str],
    *,
    count: int,
    lease_ms: int,
    require_lease: bool,
) -> ShardPlan[tuple[list[Outcome], list[Lease]]]:
    items = v.batch(items, "items")
    v.batch_size(len(items), "items to complete")
    v.batch_size(count, "count")
    v.duration_ms(lease_ms, "lease_ms")
    require_lease = v.flag(require_lease, "require_lease")
    groups = group(layout, items, lambda item: sharding._item_id(item, require_lease))
    order = turns.turn()
    kwargs = {"require_lease": require_lease}
    others = {shard: positions for shard, positions in groups.items() if shard != order[0]}
    results: dict[int, Any] = yield from sharding._each(others, items, "complete_many", **kwargs)
    leased: list[Lease]
    if order[0] in groups:
        mine = [items[i] for i in groups[order[0]]]
        results[order[0]], leased = yield OnShard(
            order[0], "complete_and_lease_many", (mine, count, lease_ms), kwargs
        )
    else:
        leased = yield OnShard(order[0], "lease_many", (), {"count": count, "lease_ms": lease_ms})
    for shard in order[1:]:
        if len(leased) == count:
            break
        leased += yield OnShard(shard, "lease_many", (), {"count": count - len(leased), "lease_ms": lease_ms})
    return scatter(groups, results, len(items)), leased


if __name__ == "__main__":
    sharding.complete_and_lease = _completes_first
    reference_adapter.main()
