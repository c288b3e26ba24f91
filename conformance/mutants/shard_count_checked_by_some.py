"""Mutant: a sharded client runs the shards script before every first operation, but compares
its reply only where its author thought of it (add, lease, counts): add_many, complete_and_lease,
the cleaners and the dead-letter list of a client configured with another count go on and route
ids to the wrong shards (RWQ-SHARD-003). The sharded group's mismatch cases call add, lease and
counts only."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.conformance import reference_adapter
from rwq.errors import ShardMismatch
from rwq.sharded import ShardedWorkQueue

UNCHECKED = ("add_many", "complete_and_lease_many", "light_clean", "deep_clean", "dead_items")


class SomeChecksQueue(ShardedWorkQueue):
    def __getattribute__(self, name: str) -> Any:
        if name in UNCHECKED and not super().__getattribute__("_counted"):
            try:
                self.record_shard_count()
            except ShardMismatch:
                object.__setattr__(self, "_counted", True)
        return super().__getattribute__(name)


if __name__ == "__main__":
    vars(reference_adapter)["ShardedWorkQueue"] = SomeChecksQueue
    serve(WorkQueue)
