"""Mutant: ``complete`` with ``require_lease`` sends a bare id with an empty-ish token instead of
refusing it, so the script's owner check reports ``LEASE_LOST`` where the call should have been
refused as invalid before any I/O (RWQ-COMPLETE-006)."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


def _leases(items: Sequence[Lease | str]) -> list[Lease | str]:
    return [item if isinstance(item, Lease) else Lease(item, b"", "-", 0) for item in items]


class BareIdQueue(WorkQueue):
    def complete(self, item: Lease | str, *, require_lease: bool = False) -> bool:
        return super().complete(_leases([item])[0] if require_lease else item, require_lease=require_lease)

    def complete_many(self, items: Sequence[Lease | str], *, require_lease: bool = False) -> list[Outcome]:
        return super().complete_many(_leases(items) if require_lease else items, require_lease=require_lease)


if __name__ == "__main__":
    serve(BareIdQueue)
