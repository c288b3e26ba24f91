"""Mutant: the eviction check reads ``CONFIG GET maxmemory-policy`` (tolerating a refusal), a
command no ACL role has, as the reference client did before RWQ-SERVER-004."""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Call, Plan
from rwq.protocol.operations import QueueKeys, RwqWarning

T = TypeVar("T")


def _config_check(keys: QueueKeys) -> Plan[None]:
    reply: Any = yield Call(("CONFIG", "GET", "maxmemory-policy"), keys.queue, errors_as_values=True)
    if isinstance(reply, dict) and reply.get("maxmemory-policy", "noeviction") != "noeviction":
        warnings.warn("Redis maxmemory-policy is not 'noeviction'", RwqWarning, stacklevel=4)


class ConfigGetQueue(WorkQueue):
    def _run(self, plan: Plan[T]) -> T:
        if not self._checked:
            self._drive(_config_check(self.keys))
        return super()._run(plan)


if __name__ == "__main__":
    serve(ConfigGetQueue)
