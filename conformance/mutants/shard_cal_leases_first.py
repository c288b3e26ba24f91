"""Mutant: ``complete_and_lease`` leases first (as ``lease_many`` does) and completes afterwards, so
that a caller that may not lease is refused before it writes: but a requeued copy of an item it
completes is then leased again, and the caller gets a lease on an item it completed."""

from __future__ import annotations

from collections.abc import Sequence

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol.operations import Lease, Outcome
from rwq.protocol.sharding import Rotation, ShardLayout, ShardPlan


def _leases_first(
    layout: ShardLayout,
    turns: Rotation,
    items: Sequence[Lease | str],
    *,
    count: int,
    lease_ms: int,
    require_lease: bool,
) -> ShardPlan[tuple[list[Outcome], list[Lease]]]:
    leased = yield from sharding.lease_many(layout, turns, count, lease_ms)
    return (yield from sharding.complete_many(layout, items, require_lease)), leased


if __name__ == "__main__":
    sharding.complete_and_lease = _leases_first
    reference_adapter.main()
