"""Shared part of the prefix mutants: a queue whose prefix segments are checked by a wrong rule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rwq.client import WorkQueue
from rwq.errors import InvalidArgument
from rwq.protocol import validation as v
from rwq.protocol.operations import QueueKeys


def checked_by(refuse: Callable[[list[str]], bool]) -> type[WorkQueue]:
    """A queue class that checks its prefix as the reference does, but its segments after the first
    by ``refuse`` instead of RWQ-KEYS-008."""

    class SegmentRuleQueue(WorkQueue):
        def __init__(self, redis: Any, prefix: str, *, legacy_lease_key: bool = False) -> None:
            if not isinstance(prefix, str):
                super().__init__(redis, prefix, legacy_lease_key=legacy_lease_key)
                return
            first, *rest = prefix.split(":")
            neutral = [first] + ["x" * len(s) if s in v.RESERVED_SEGMENTS else s for s in rest]
            super().__init__(redis, ":".join(neutral), legacy_lease_key=legacy_lease_key)
            if refuse(rest):
                raise InvalidArgument(f"prefix refused: {prefix!r}")
            self.keys = QueueKeys(prefix)

    return SegmentRuleQueue
