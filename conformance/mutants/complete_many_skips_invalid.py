"""Mutant: ``complete_many`` silently leaves out the ids it finds invalid and completes the rest."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import InvalidArgument
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease, Outcome


def _valid(item: Lease | str) -> bool:
    try:
        v.encode_id(item.id if isinstance(item, Lease) else item)
    except InvalidArgument:
        return False
    return True


class SkippingQueue(WorkQueue):
    def complete_many(self, items: Sequence[Lease | str], *, require_lease: bool = False) -> list[Outcome]:
        return super().complete_many([item for item in items if _valid(item)], require_lease=require_lease)


if __name__ == "__main__":
    serve(SkippingQueue)
