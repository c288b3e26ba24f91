"""Mutant: a prefix is refused when its hash tag is a shard's, ``P#i``, rather than when the whole
prefix is ``{P#i}``, so ``{P#0}:x``, a queue of its own, cannot be opened."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import InvalidArgument
from rwq.protocol import validation as v


class HashTagRuleQueue(WorkQueue):
    def __init__(self, redis: Any, prefix: str, **options: Any) -> None:
        tag = v.hash_tag(prefix) if isinstance(prefix, str) else None
        if tag is not None and v.shard_form(f"{{{tag}}}"):
            raise InvalidArgument(f"prefix has the hash tag of a shard (RWQ-KEYS-010): {prefix!r}")
        super().__init__(redis, prefix, **options)


if __name__ == "__main__":
    serve(HashTagRuleQueue)
