"""Mutant: the port's policy counts retries after the first attempt and stores
``max_attempts - 1``, so an item is dead-lettered one failure early."""

from __future__ import annotations

import dataclasses

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import RetryPolicy


class EarlyDeadQueue(WorkQueue):
    def set_retry_policy(self, policy: RetryPolicy | None, *, if_absent: bool = False) -> bool:
        if policy is not None and policy.max_attempts > 1:
            policy = dataclasses.replace(policy, max_attempts=policy.max_attempts - 1)
        return super().set_retry_policy(policy, if_absent=if_absent)


if __name__ == "__main__":
    serve(EarlyDeadQueue)
