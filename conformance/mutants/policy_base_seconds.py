"""Mutant: ``set_policy`` sends ``base_ms`` in seconds (``base_ms // 1000``), a unit bug."""

from __future__ import annotations

import dataclasses

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import RetryPolicy


class BaseSecondsQueue(WorkQueue):
    def set_retry_policy(self, policy: RetryPolicy | None, *, if_absent: bool = False) -> bool:
        if policy is not None:
            policy = dataclasses.replace(policy, base_ms=policy.base_ms // 1000)
        return super().set_retry_policy(policy, if_absent=if_absent)


if __name__ == "__main__":
    serve(BaseSecondsQueue)
