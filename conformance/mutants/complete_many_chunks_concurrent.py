"""Mutant: complete_many sends its calls of 1000 concurrently and the last one happens to run
first: outcomes are put back in input order, but an id repeated across chunks is completed by
its later occurrence, and its first occurrence is reported gone."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


class ConcurrentChunksQueue(WorkQueue):
    def complete_many(self, items: Sequence[Lease | str], *, require_lease: bool = False) -> list[Outcome]:
        chunks = [items[start : start + 1000] for start in range(0, len(items), 1000)]
        done = {
            i: WorkQueue.complete_many(self, chunks[i], require_lease=require_lease)
            for i in reversed(range(len(chunks)))
        }
        return [outcome for i in range(len(chunks)) for outcome in done[i]]


if __name__ == "__main__":
    serve(ConcurrentChunksQueue)
