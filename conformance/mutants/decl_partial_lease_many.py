"""Mutant: a lease call that replies again = 1 with some items ends lease_many there, as a core
client may after 1000 skipped entries: with a stale window, lease_many returns fewer items than
are ready (RWQ-DECL-004)."""

from __future__ import annotations

from typing import Any

from rwq.conformance import reference_adapter
from rwq.protocol import operations
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease, QueueKeys, _flag, _leases
from rwq.protocol.scripts import registry


def _lease_call(
    keys: QueueKeys, lease_ms: int, token: str, count: int, *, legacy: bool, flat: bool
) -> Plan[tuple[list[Lease], int, int]]:
    while True:
        args = (lease_ms, token.encode(), count, _flag(legacy), _flag(flat))
        reply: Any = yield RunScript(registry()["lease"], (keys.queue, keys.processing), args)
        again, now, due_in, *entries = reply
        if entries or not again:
            return _leases(entries, token), now, due_in


if __name__ == "__main__":
    operations._lease_call = _lease_call
    reference_adapter.main()
