"""Mutant: ``complete_many`` sends each id once and reports that id's outcome for each of its
occurrences, so an id repeated in one batch is "done" twice."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


def _key(item: Lease | str) -> str:
    return item.id if isinstance(item, Lease) else item


class DedupQueue(WorkQueue):
    def complete_many(self, items: Sequence[Lease | str], *, require_lease: bool = False) -> list[Outcome]:
        unique: dict[str, Lease | str] = {}
        for item in items:
            unique.setdefault(_key(item), item)
        results = super().complete_many(list(unique.values()), require_lease=require_lease)
        outcomes = dict(zip(unique, results, strict=True))
        return [outcomes[_key(item)] for item in items]


if __name__ == "__main__":
    serve(DedupQueue)
