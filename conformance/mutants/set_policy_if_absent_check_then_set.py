"""Mutant: ``set_policy_if_absent`` reads the policy, then writes it in a second call if there was
none: another client's policy set in between is replaced (RWQ-RETRY-015)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import RetryPolicy


class CheckThenSetQueue(WorkQueue):
    def set_retry_policy(self, policy: RetryPolicy | None, *, if_absent: bool = False) -> bool:
        if if_absent and self.retry_policy() is not None:
            return False
        return super().set_retry_policy(policy)


if __name__ == "__main__":
    serve(CheckThenSetQueue)
