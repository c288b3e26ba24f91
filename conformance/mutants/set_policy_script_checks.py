"""Mutant: ``set_retry_policy`` sends the policy unchecked and relies on the script's checks (it
refuses a bad field and writes nothing, but after I/O)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import QueueKeys, RetryPolicy
from rwq.protocol.scripts import registry


def _set_policy(keys: QueueKeys, policy: RetryPolicy) -> Plan[None]:
    yield RunScript(registry()["set_policy"], (keys.queue,), policy.fields())


class TrustingPolicyQueue(WorkQueue):
    def set_retry_policy(self, policy: RetryPolicy | None, *, if_absent: bool = False) -> bool:
        if policy is None:
            return super().set_retry_policy(policy)
        self._run(_set_policy(self.keys, policy))
        return True


if __name__ == "__main__":
    serve(TrustingPolicyQueue)
