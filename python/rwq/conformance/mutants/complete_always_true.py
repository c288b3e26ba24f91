"""Mutant: ``complete`` reports every caller as the first completer."""

from __future__ import annotations

from ...client import WorkQueue
from ...protocol.operations import Lease
from . import serve


class AlwaysFirstQueue(WorkQueue):
    def complete(self, item: Lease | str, *, require_lease: bool = False) -> bool:
        super().complete(item, require_lease=require_lease)
        return True


if __name__ == "__main__":
    serve(AlwaysFirstQueue)
