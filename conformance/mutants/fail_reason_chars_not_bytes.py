"""Mutant: fail limits its reason to 1024 characters instead of 1024 UTF-8 bytes, so a reason of
600 two-byte characters reaches the script, which refuses it after I/O."""

from __future__ import annotations

import secrets
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import InvalidArgument, LeaseLost
from rwq.protocol import operations as ops
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import FailOutcome, FailResult, Lease, QueueKeys
from rwq.protocol.scripts import registry


def _fail(keys: QueueKeys, held: Lease, reason: str) -> Plan[FailResult]:
    if len(reason) > 1024:
        raise InvalidArgument("reason must be at most 1024 characters")
    args = (v.encode_id(held.id), v.token(held.token), reason.encode("utf-8"), secrets.randbelow(1_000_000))
    status, delay = yield RunScript(registry()["fail"], (keys.queue, keys.processing), args)
    if status == -1:
        raise LeaseLost(f"the lease on {held.id!r} is no longer held by this caller")
    if status == 2:
        yield from ops._trim_dead(keys)
    return FailResult(FailOutcome(status), int(delay))


class CharsQueue(WorkQueue):
    def fail(self, lease: Lease, reason: str = "", **options: Any) -> FailResult:
        return self._run(_fail(self.keys, lease, reason))


if __name__ == "__main__":
    serve(CharsQueue)
