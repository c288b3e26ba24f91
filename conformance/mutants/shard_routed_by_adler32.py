"""Mutant: ids are routed by Adler-32 rather than CRC-32: every client of this port agrees, but
not with any other port on the same queue."""

from __future__ import annotations

import zlib

from rwq.conformance import reference_adapter
from rwq.protocol import validation
from rwq.protocol.sharding import ShardLayout


def _shard_of(self: ShardLayout, item_id: str) -> int:
    return zlib.adler32(validation.encode_id(item_id)) % self.count


if __name__ == "__main__":
    ShardLayout.shard_of = _shard_of  # type: ignore[method-assign]
    reference_adapter.main()
