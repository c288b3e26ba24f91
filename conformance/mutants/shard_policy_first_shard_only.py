"""Mutant: the retry policy is stored in shard 0 only, so the other shards retry and dead-letter
without it."""

from __future__ import annotations

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol.operations import RetryPolicy
from rwq.protocol.sharding import OnShard, ShardLayout, ShardPlan


def _set_retry_policy(layout: ShardLayout, policy: RetryPolicy | None, if_absent: bool) -> ShardPlan[bool]:
    kwargs = {"policy": policy, "if_absent": if_absent}
    return bool((yield OnShard(0, "set_retry_policy", (), kwargs)))


if __name__ == "__main__":
    sharding.set_retry_policy = _set_retry_policy
    reference_adapter.main()
