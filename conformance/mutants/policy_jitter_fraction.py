"""Mutant: ``set_policy`` sends the jitter as a fraction of 1 truncated to an integer
(``jitter_pct // 100``), so 25 % becomes 0 and only 100 % survives, as 1 %."""

from __future__ import annotations

import dataclasses

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import RetryPolicy


class FractionQueue(WorkQueue):
    def set_retry_policy(self, policy: RetryPolicy | None, *, if_absent: bool = False) -> bool:
        if policy is not None:
            policy = dataclasses.replace(policy, jitter_pct=policy.jitter_pct // 100)
        return super().set_retry_policy(policy, if_absent=if_absent)


if __name__ == "__main__":
    serve(FractionQueue)
