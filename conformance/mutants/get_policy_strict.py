"""Mutant: ``get_policy`` refuses a stored policy with a malformed number (``REDIS_ERROR``)
instead of reading it as 0, as the scripts that apply it do."""

from __future__ import annotations

from typing import Literal

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.errors import RedisFailure
from rwq.protocol.commands import Plan
from rwq.protocol.operations import _POLICY_LIMITS, QueueKeys, RetryPolicy


def _strict(keys: QueueKeys) -> Plan[RetryPolicy | None]:
    raw: dict[bytes, bytes] = yield call(keys, "HGETALL", keys.policy)
    if not raw:
        return None
    fields = {key.decode(): value.decode("utf-8", "replace") for key, value in raw.items()}
    try:
        numbers = {name: int(fields[name]) for name in _POLICY_LIMITS}
    except (KeyError, ValueError) as exc:
        raise RedisFailure(f"malformed policy field: {exc}") from exc
    backoff: Literal["fixed", "exponential"] = (
        "exponential" if fields.get("backoff") == "exponential" else "fixed"
    )
    return RetryPolicy(backoff=backoff, **numbers)


class StrictPolicyQueue(WorkQueue):
    def retry_policy(self) -> RetryPolicy | None:
        return self._run(_strict(self.keys))


if __name__ == "__main__":
    serve(StrictPolicyQueue)
