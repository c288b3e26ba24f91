"""Mutant: a sharded queue's shards are ``P#i``, without the braces of a hash tag: right on one
server, but on a cluster every key of a shard lands in the slot of its own name."""

from __future__ import annotations

from rwq.conformance import reference_adapter
from rwq.protocol import validation as v
from rwq.protocol.sharding import ShardLayout


def _prefixes(self: ShardLayout) -> tuple[str, ...]:
    return tuple(f"{self.prefix}#{i}" for i in range(self.count))


def _post_init(self: ShardLayout) -> None:
    v.prefix(self.prefix, cluster=False)  # and no check that each shard has a hash tag
    v.integer(self.count, "shards", 1, 1024)


if __name__ == "__main__":
    ShardLayout.prefixes = property(_prefixes)  # type: ignore[assignment]
    ShardLayout.__post_init__ = _post_init  # type: ignore[method-assign]
    reference_adapter.main()
