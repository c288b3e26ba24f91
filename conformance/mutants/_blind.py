"""Shared parts of the ``blind_*`` mutants: ports of RWQ-RETRY-016..021 written from SPEC alone,
each with one mistake, by the red team of issue #21. ``fail_plan`` runs the canonical ``fail``
script with ARGV the mutant built itself, so a mutant can get the options wrong the way a port
building that ARGV would."""

from __future__ import annotations

import secrets

from rwq.conformance import reference_adapter
from rwq.errors import LeaseLost
from rwq.protocol import operations as ops
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import FailOutcome, FailResult, Lease, QueueKeys
from rwq.protocol.scripts import registry
from rwq.sharded import ShardedWorkQueue

Options = tuple[bytes, int, bytes]
"""The fail script's how, delay_ms and detail."""


def fail_plan(keys: QueueKeys, held: Lease, reason: bytes, options: Options) -> Plan[FailResult]:
    """The fail script with ARGV ``id, token, reason, r`` then ``options`` (how, delay_ms, detail)."""
    how, ms, detail = options
    random = secrets.randbelow(1_000_000)
    args = (v.encode_id(held.id), v.token(held.token), reason, random, how, str(ms).encode(), detail)
    status, delay = yield RunScript(registry()["fail"], (keys.queue, keys.processing), args)
    if status == -1:
        raise LeaseLost(f"the lease on {held.id!r} is no longer held by this caller")
    if status == 2:
        while True:
            removed, _excess = yield RunScript(registry()["dead"], (keys.queue,), (b"trim",))
            if removed < 1000:
                break
    return FailResult(FailOutcome(status), int(delay))


def release_plan(
    keys: QueueKeys, leases: list[Lease], head: tuple[bytes | int, ...], chunk: int = 1000
) -> Plan[list[ops.Outcome]]:
    """The release script with ``head`` (``[refund,] delay_ms``) before each chunk's pairs."""
    pairs = [(v.encode_id(one.id), v.token(one.token)) for one in leases]
    outcomes: list[ops.Outcome] = []
    for start in range(0, len(pairs), chunk):
        args = (*head, *(part for pair in pairs[start : start + chunk] for part in pair))
        reply = yield RunScript(registry()["release"], (keys.queue, keys.processing), args)
        outcomes.extend(ops.Outcome(code) for code in reply)
    return outcomes


def serve_sharded(queue_class: type[ShardedWorkQueue]) -> None:
    """Run the reference adapter with ``queue_class`` in place of :class:`ShardedWorkQueue`."""
    vars(reference_adapter)["ShardedWorkQueue"] = queue_class
    reference_adapter.main()
