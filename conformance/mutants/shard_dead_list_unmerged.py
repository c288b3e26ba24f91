"""Mutant: the dead-letter list of a sharded queue is each shard's list in turn, newest first
within a shard only, not merged by dead-letter time."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol.operations import DeadItem


def _concatenated(per_shard: Iterable[Sequence[DeadItem]], offset: int, count: int) -> list[DeadItem]:
    every = [item for items in per_shard for item in items]
    return every[offset : offset + count]


if __name__ == "__main__":
    sharding.newest_dead = _concatenated
    reference_adapter.main()
