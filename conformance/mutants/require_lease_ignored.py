"""Mutant: ``complete`` ignores ``require_lease``: a caller that lost its lease still completes."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


class AnyCompleterQueue(WorkQueue):
    def complete(self, item: Lease | str, *, require_lease: bool = False) -> bool:
        return super().complete(item)

    def complete_many(self, items: Sequence[Lease | str], *, require_lease: bool = False) -> list[Outcome]:
        return super().complete_many(items)


if __name__ == "__main__":
    serve(AnyCompleterQueue)
