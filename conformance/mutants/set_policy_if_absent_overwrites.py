"""Mutant: ``set_policy_if_absent`` writes the policy whether or not the queue has one, replacing
an operator's policy with a worker's default (RWQ-RETRY-015)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import RetryPolicy


class OverwritingQueue(WorkQueue):
    def set_retry_policy(self, policy: RetryPolicy | None, *, if_absent: bool = False) -> bool:
        return super().set_retry_policy(policy)


if __name__ == "__main__":
    serve(OverwritingQueue)
