"""Mutant: ``complete_many`` drops ``require_lease`` (the single ``complete`` keeps it), so a batch
completes items whose leases the caller lost."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


class AnyModeBatchQueue(WorkQueue):
    def complete_many(self, items: Sequence[Lease | str], *, require_lease: bool = False) -> list[Outcome]:
        return super().complete_many(items)


if __name__ == "__main__":
    serve(AnyModeBatchQueue)
