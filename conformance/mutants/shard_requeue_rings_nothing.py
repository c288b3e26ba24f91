"""Mutant: a requeue of dead items makes them ready but rings no doorbell (only adds and releases
ring), so consumers waiting on the bell find them only when their wait step ends."""

from __future__ import annotations

from collections.abc import Sequence

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol import validation as v
from rwq.protocol.sharding import ShardLayout, ShardPlan, _each, group, scatter


def _dead_action(layout: ShardLayout, method: str, ids: Sequence[str]) -> ShardPlan[list[bool]]:
    ids = v.batch(ids, "ids")
    groups = group(layout, ids, lambda item_id: item_id)
    done: list[bool] = scatter(groups, (yield from _each(groups, ids, method)), len(ids))
    return done


if __name__ == "__main__":
    sharding.dead_action = _dead_action
    reference_adapter.main()
