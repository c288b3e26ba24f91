"""Mutant: ``get_policy`` takes any Unicode decimal digits as a number (Python's ``str.isdigit``
and ``int``), where the scripts' ``^%d+$`` takes ASCII digits only and reads the rest as 0."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Plan
from rwq.protocol.operations import _POLICY_LIMITS, QueueKeys, RetryPolicy


def _unicode(keys: QueueKeys, policy: RetryPolicy) -> Plan[RetryPolicy]:
    raw: dict[bytes, bytes] = yield call(keys, "HGETALL", keys.policy)
    fields = {key.decode(): value.decode("utf-8", "replace") for key, value in raw.items()}
    wide = {
        name: int(fields[name]) if fields.get(name, "").isdecimal() else getattr(policy, name)
        for name in _POLICY_LIMITS
    }
    return RetryPolicy(backoff=policy.backoff, **wide)


class UnicodeDigitsQueue(WorkQueue):
    def retry_policy(self) -> RetryPolicy | None:
        policy = super().retry_policy()
        return None if policy is None else self._run(_unicode(self.keys, policy))


if __name__ == "__main__":
    serve(UnicodeDigitsQueue)
