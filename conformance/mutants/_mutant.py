"""Shared parts of the mutants: deliberately broken adapters that test the conformance suite.

Each mutant in this directory is the reference adapter with one realistic bug injected: usually a
subclass of :class:`rwq.WorkQueue` that overrides one operation, served by :func:`serve`. Its
``hello`` is the reference's, canonical script SHAs included, so only the bug can make cases fail.
Run one as ``python conformance/mutants/<name>.py``; the audit ledger (``conformance/audit/``)
names, for each, the case that must catch it, and ``make mutants`` checks that it does. Mutants
are test data: they are not part of the wheel.
"""

from __future__ import annotations

from collections.abc import Callable

from rwq.client import WorkQueue
from rwq.conformance import reference_adapter
from rwq.protocol.commands import Call, Plan
from rwq.protocol.operations import CleanReport, QueueKeys
from rwq.protocol.validation import decode_id, encode_id


def serve(queue_class: type[WorkQueue]) -> None:
    """Run the reference adapter with ``queue_class`` in place of :class:`WorkQueue`."""
    vars(reference_adapter)["WorkQueue"] = queue_class
    reference_adapter.main()


def call(keys: QueueKeys, *args: str | bytes | int | float) -> Call:
    """A plain command on the queue ``keys`` (for plans that bypass the canonical scripts)."""
    return Call(tuple(args), keys.queue)


def raw_light_clean(keys: QueueKeys, lease_keys: Callable[[str], list[bytes]]) -> Plan[CleanReport]:
    """A light clean made of plain commands, as redis-work-queue's cleaners do it: an in-flight
    item counts as leased while one of ``lease_keys(id)`` exists; ghosts are dropped."""
    raw: list[bytes] = yield call(keys, "LRANGE", keys.processing, 0, -1)
    requeued: list[str] = []
    dropped = 0
    for entry in reversed(raw):
        item_id = decode_id(entry)
        if not (yield call(keys, "EXISTS", keys.item(item_id))):
            yield call(keys, "LREM", keys.processing, 1, entry)
            dropped += 1
            continue
        held = lease_keys(item_id)
        if held and (yield call(keys, "EXISTS", *held)):
            continue
        yield call(keys, "LREM", keys.processing, 1, entry)
        yield call(keys, "LPUSH", keys.queue, encode_id(item_id))
        requeued.append(item_id)
    return CleanReport(tuple(requeued), dropped)
