"""Mutant: a ring that fails fails the call that made the items ready, though the write took
effect: the ring is a hint (RWQ-SHARD-010), so the caller retries an add that succeeded."""

from __future__ import annotations

from typing import Any

from rwq.conformance import reference_adapter
from rwq.protocol.sharding import OnBell
from rwq.sharded import ShardedWorkQueue


def _bell(self: ShardedWorkQueue, step: OnBell) -> Any:
    return self.queues[0]._run(step.plan)


if __name__ == "__main__":
    ShardedWorkQueue._bell = _bell  # type: ignore[method-assign]
    reference_adapter.main()
