"""Mutant: ``complete`` reports every caller as the first completer."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


class AlwaysFirstQueue(WorkQueue):
    def complete(self, item: Lease | str, *, require_lease: bool = False) -> bool:
        super().complete(item, require_lease=require_lease)
        return True


if __name__ == "__main__":
    serve(AlwaysFirstQueue)
