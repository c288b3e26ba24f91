"""Mutant: ``add_many`` sends the whole batch to the shard of its first item (right for a batch
of one, or of ids that share a shard)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from rwq.conformance import reference_adapter
from rwq.protocol import sharding
from rwq.protocol.sharding import ShardLayout

T = TypeVar("T")


def _group(layout: ShardLayout, items: Iterable[T], item_id: Callable[[T], str]) -> dict[int, list[int]]:
    listed = list(items)
    return {layout.shard_of(item_id(listed[0])): list(range(len(listed)))} if listed else {}


if __name__ == "__main__":
    sharding.group = _group
    reference_adapter.main()
