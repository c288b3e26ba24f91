"""Mutant: clearing the policy writes a policy of zeros ("no limits") instead of deleting
``P:policy``, so attempts go on being counted and ``get_policy`` still finds one."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import RetryPolicy

NO_LIMITS = RetryPolicy(
    max_attempts=0, backoff="fixed", base_ms=0, cap_ms=0, jitter_pct=0, dead_max_count=0, dead_max_age_ms=0
)


class ZeroClearQueue(WorkQueue):
    def set_retry_policy(self, policy: RetryPolicy | None, *, if_absent: bool = False) -> bool:
        return super().set_retry_policy(NO_LIMITS if policy is None else policy, if_absent=if_absent)


if __name__ == "__main__":
    serve(ZeroClearQueue)
