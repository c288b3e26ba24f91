"""Mutant: a non-blocking ``lease`` silently ignores a ``timeout_ms`` given without ``block``,
so a caller who forgot ``block=True`` gets an immediate empty answer instead of an error."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


class TimeoutIgnoredQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        return super().lease(lease_ms, block=block, timeout_ms=timeout_ms if block else 0)


if __name__ == "__main__":
    serve(TimeoutIgnoredQueue)
