"""Mutant: ``fail`` leaves its delays and detail unchecked and lets the script refuse them, which
it does, but only after the call went to Redis."""

from __future__ import annotations

import secrets
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import LeaseLost
from rwq.protocol import operations as ops
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import FailOutcome, FailResult, Lease, QueueKeys
from rwq.protocol.scripts import registry


def _fail(keys: QueueKeys, held: Lease, reason: str, options: dict[str, Any]) -> Plan[FailResult]:
    how, ms = b"backoff", options.get("fallback_delay_ms", 0)
    if options.get("dead"):
        how, ms = b"dead", options.get("delay_ms") or 0
    elif options.get("delay_ms") is not None:
        how, ms = b"delay", options["delay_ms"]
    detail = options.get("detail", "").encode("utf-8")
    args = (v.encode_id(held.id), v.token(held.token), ops.fail_reason(reason), secrets.randbelow(1_000_000))
    status, delay = yield RunScript(
        registry()["fail"], (keys.queue, keys.processing), (*args, how, str(ms).encode(), detail)
    )
    if status == -1:
        raise LeaseLost(f"the lease on {held.id!r} is no longer held by this caller")
    if status == 2:
        yield from ops._trim_dead(keys)
    return FailResult(FailOutcome(status), int(delay))


class UncheckedQueue(WorkQueue):
    def fail(self, lease: Lease, reason: str = "", **options: Any) -> FailResult:
        return self._run(_fail(self.keys, lease, reason, options))


if __name__ == "__main__":
    serve(UncheckedQueue)
