"""Mutant: a lease that calls again after ``again = 1`` passes ``legacy`` and ``flat`` only on its
first script call: an item found by the continuation is leased without the legacy lease key and
kept in ``P:processing`` instead of ``P:in_flight`` (RWQ-LEASE-007 with RWQ-COMPAT-004, RWQ-FLAT-001)."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import QueueKeys
from rwq.protocol.scripts import registry


def _lease_call(
    keys: QueueKeys, lease_ms: int, token: str, count: int, *, legacy: bool, flat: bool
) -> Plan[tuple[list[Any], int, int]]:
    leased: list[Any] = []
    first = True
    while True:
        flags = (b"1" if legacy and first else b"0", b"1" if flat and first else b"0")
        args = (lease_ms, token.encode(), count - len(leased), *flags)
        again, now, due_in, *entries = yield RunScript(
            registry()["lease"], (keys.queue, keys.processing), args
        )
        leased += ops._leases(entries, token)
        first = False
        if len(leased) == count or not again:
            return leased, now, due_in


if __name__ == "__main__":
    ops._lease_call = _lease_call
    serve(WorkQueue)
