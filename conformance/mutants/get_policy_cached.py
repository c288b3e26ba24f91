"""Mutant: ``get_policy`` reads ``P:policy`` once per client and answers from that copy ever
after, so it misses every later change by any client."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import RetryPolicy

_UNSET: Any = object()


class CachedPolicyQueue(WorkQueue):
    _cached: Any = _UNSET

    def retry_policy(self) -> RetryPolicy | None:
        if self._cached is _UNSET:
            self._cached = super().retry_policy()
        policy: RetryPolicy | None = self._cached
        return policy


if __name__ == "__main__":
    serve(CachedPolicyQueue)
