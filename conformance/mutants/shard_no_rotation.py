"""Mutant: every lease visits the shards from shard 0, so a busy shard 0 starves the others."""

from __future__ import annotations

from rwq.conformance import reference_adapter
from rwq.protocol.sharding import Rotation, rotation


def _turn(self: Rotation) -> list[int]:
    self.next = 0
    return rotation(0, self.count)


if __name__ == "__main__":
    Rotation.turn = _turn  # type: ignore[method-assign]
    reference_adapter.main()
