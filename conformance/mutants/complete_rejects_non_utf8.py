"""Mutant: ``complete`` applies the new-id rule (valid UTF-8) to the ids it completes, so items
whose ids other clients wrote as non-UTF-8 bytes can never be completed."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease, Outcome


def _check(items: Sequence[Lease | str]) -> None:
    for item in items:
        v.encode_new_id(item.id if isinstance(item, Lease) else item)


class StrictIdQueue(WorkQueue):
    def complete(self, item: Lease | str, *, require_lease: bool = False) -> bool:
        _check([item])
        return super().complete(item, require_lease=require_lease)

    def complete_many(self, items: Sequence[Lease | str], *, require_lease: bool = False) -> list[Outcome]:
        _check(items)
        return super().complete_many(items, require_lease=require_lease)


if __name__ == "__main__":
    serve(StrictIdQueue)
