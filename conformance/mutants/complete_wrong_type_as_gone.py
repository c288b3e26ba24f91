"""Mutant: ``complete`` reports a wrong-typed key as False ("already completed"), so the caller
moves on while the item stays in the queue's keys."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import WrongType
from rwq.protocol.operations import Lease


class GoneOnWrongTypeQueue(WorkQueue):
    def complete(self, item: str | Lease, *, require_lease: bool = False) -> bool:
        try:
            return super().complete(item, require_lease=require_lease)
        except WrongType:
            return False


if __name__ == "__main__":
    serve(GoneOnWrongTypeQueue)
