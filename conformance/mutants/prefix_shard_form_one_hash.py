"""Mutant: the shard form is checked with a name that holds no ``#``, so ``{P#1#2}``, shard 2 of
queue ``P#1``, opens as a queue of its own."""

from __future__ import annotations

import re
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v

_NO_HASH = re.compile(r"\{[^{}#]+#(0|[1-9][0-9]{0,3})\}")


class OneHashQueue(WorkQueue):
    def __init__(self, redis: Any, prefix: str, **options: Any) -> None:
        if isinstance(prefix, str) and not _NO_HASH.fullmatch(prefix):
            prefix = v.ShardPrefix(prefix)  # only the narrower form is checked
        super().__init__(redis, prefix, **options)


if __name__ == "__main__":
    serve(OneHashQueue)
