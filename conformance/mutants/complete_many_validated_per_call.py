"""Mutant: complete_many validates each call's 1000 leases as it sends them, so a bad lease after
the first 1000 is refused only once the first 1000 items are completed (RWQ-ERR-004). Written blind
by a red-team helper (in Go first), caught by no case until validation/complete-many/."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.operations import Lease, Outcome


class PerCallQueue(WorkQueue):
    def complete_many(self, items: Sequence[Lease | str], *, require_lease: bool = False) -> list[Outcome]:
        items = list(items)
        outcomes: list[Outcome] = []
        for start in range(0, len(items), 1000):
            chunk = items[start : start + 1000]
            outcomes += self._run(ops.complete(self.keys, chunk, require_lease=require_lease, wait=self.wait))
        return outcomes


if __name__ == "__main__":
    serve(PerCallQueue)
