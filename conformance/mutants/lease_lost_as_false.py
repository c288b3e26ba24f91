"""Mutant: a single ``complete`` with ``require_lease`` reports a lease it does not hold as False
(as for an item already gone) instead of the LEASE_LOST error."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import LeaseLost
from rwq.protocol.operations import Lease


class QuietQueue(WorkQueue):
    def complete(self, item: Lease | str, *, require_lease: bool = False) -> bool:
        try:
            return super().complete(item, require_lease=require_lease)
        except LeaseLost:
            return False


if __name__ == "__main__":
    serve(QuietQueue)
