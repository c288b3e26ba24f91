"""Mutant (red team, RWQ-ERR-004): the sharded ``release_many`` leaves each lease's check to its
shard's own call, so a bad lease on a shard visited late is refused after the shards visited
before it were released."""

from __future__ import annotations

from collections.abc import Sequence

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease, Outcome, lease_arg
from rwq.protocol.sharding import ShardLayout, ShardPlan, group, ring, scatter


def _release_many(
    layout: ShardLayout, leases: Sequence[Lease], delay_ms: int, refund_attempt: bool = False
) -> ShardPlan[list[Outcome]]:
    v.duration_ms(delay_ms, "delay_ms", minimum=0)
    held = [lease_arg(one) for one in v.batch(leases, "leases")]  # ids and tokens unchecked
    groups = group(layout, held, lambda one: one.id)
    results = yield from sharding._each(
        groups, held, "release_many", delay_ms=delay_ms, refund_attempt=refund_attempt
    )
    outcomes: list[Outcome] = scatter(groups, results, len(held))
    yield from ring(layout, 0 if delay_ms else outcomes.count(Outcome.DONE))
    return outcomes


if __name__ == "__main__":
    sharding.release_many = _release_many
    reference_adapter.main()
