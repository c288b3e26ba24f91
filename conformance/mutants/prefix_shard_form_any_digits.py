"""Mutant: every prefix ``{<text>#<digits>}`` is refused as a shard's, so ``{P#01}`` and
``{P#1024}``, which no shard has (no leading zeros, at most 1024 shards), cannot be opened."""

from __future__ import annotations

import re
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import InvalidArgument

_DIGITS = re.compile(r"\{[^{}]+#[0-9]+\}")


class AnyDigitsRefusedQueue(WorkQueue):
    def __init__(self, redis: Any, prefix: str, **options: Any) -> None:
        if isinstance(prefix, str) and _DIGITS.fullmatch(prefix):
            raise InvalidArgument(f"prefix has the form of a shard's (RWQ-KEYS-010): {prefix!r}")
        super().__init__(redis, prefix, **options)


if __name__ == "__main__":
    serve(AnyDigitsRefusedQueue)
