"""Mutant (red team, RWQ-SHARD-001): the shard count is checked as 1..1023, an exclusive upper
bound, so a deployment at SPEC's maximum of 1,024 shards cannot open its queue."""

from __future__ import annotations

from rwq.conformance import reference_adapter
from rwq.protocol import sharding

if __name__ == "__main__":
    sharding.MAX_SHARDS = 1023  # ShardLayout checks 1..MAX_SHARDS
    reference_adapter.main()
