"""Mutant: ``complete`` reports a failed connection as False ("not the first completer"), so a
caller whose completion did take effect believes another worker finished the item."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import RedisFailure
from rwq.protocol.operations import Lease


class QuietCompleteQueue(WorkQueue):
    def complete(self, item: Lease | str, *, require_lease: bool = False) -> bool:
        try:
            return super().complete(item, require_lease=require_lease)
        except RedisFailure:
            return False


if __name__ == "__main__":
    serve(QuietCompleteQueue)
