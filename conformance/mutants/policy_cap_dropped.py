"""Mutant: ``set_policy`` drops ``cap_ms`` (always sends 0, "no cap"), so exponential backoff
grows past the cap."""

from __future__ import annotations

import dataclasses

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import RetryPolicy


class NoCapQueue(WorkQueue):
    def set_retry_policy(self, policy: RetryPolicy | None, *, if_absent: bool = False) -> bool:
        if policy is not None:
            policy = dataclasses.replace(policy, cap_ms=0)
        return super().set_retry_policy(policy, if_absent=if_absent)


if __name__ == "__main__":
    serve(NoCapQueue)
