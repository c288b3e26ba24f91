"""Mutant: batch results are each shard's results joined in the order the shards first appear in
the input (a dict or Map walk), not put back in input order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

from rwq.conformance import reference_adapter
from rwq.protocol import sharding

R = TypeVar("R")


def _joined(groups: Mapping[int, list[int]], results: Mapping[int, Sequence[R]], size: int) -> list[R]:
    return [result for shard in groups for result in results[shard]]


if __name__ == "__main__":
    sharding.scatter = _joined
    reference_adapter.main()
