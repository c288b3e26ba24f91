"""Mutant: ``set_policy`` remembers the last policy this client wrote and skips the call when asked
for the same one again, although another client may have replaced it meanwhile."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import RetryPolicy

_UNSET: Any = object()


class CachingQueue(WorkQueue):
    _written: Any = _UNSET

    def set_retry_policy(self, policy: RetryPolicy | None, *, if_absent: bool = False) -> bool:
        if policy == self._written:
            return True
        written = super().set_retry_policy(policy, if_absent=if_absent)
        self._written = policy
        return written


if __name__ == "__main__":
    serve(CachingQueue)
