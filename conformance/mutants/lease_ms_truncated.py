"""Mutant: the lease methods truncate a lease time that is not an integer instead of refusing it,
as ``Math.trunc`` or ``parseInt`` would: ``lease(1.5)`` grants a 1 ms lease and ``lease("5")``
a 5 ms one (RWQ-ENC-003). The Node port of issue #24 shipped this."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


def _truncated(value: object) -> Any:
    if isinstance(value, (float, str)):
        return int(float(value))
    return value


class TruncatingQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        return super().lease(_truncated(lease_ms), block=block, timeout_ms=timeout_ms)

    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        return super().lease_many(count=count, lease_ms=_truncated(lease_ms))


if __name__ == "__main__":
    serve(TruncatingQueue)
