"""Mutant: the client validates the policy's fields with exclusive upper bounds, refusing
``jitter_pct`` 100, ``max_attempts`` 1,000,000 and the other documented maxima."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import InvalidArgument
from rwq.protocol.operations import _POLICY_LIMITS, RetryPolicy


class ExclusiveQueue(WorkQueue):
    def set_retry_policy(self, policy: RetryPolicy | None, *, if_absent: bool = False) -> bool:
        for name, limit in _POLICY_LIMITS.items():
            if policy is not None and getattr(policy, name) >= limit:
                raise InvalidArgument(f"{name} must be below {limit}")
        return super().set_retry_policy(policy, if_absent=if_absent)


if __name__ == "__main__":
    serve(ExclusiveQueue)
