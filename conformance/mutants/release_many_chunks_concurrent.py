"""Mutant: release_many sends its calls of 1000 concurrently (Promise.all, a goroutine per chunk)
and the last one happens to run first: the outcomes are put back in input order, but the leases
past the first 1000 are pushed onto the queue before the first 1000."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease, Outcome


class ConcurrentChunksQueue(WorkQueue):
    def release_many(self, leases: Sequence[Lease], *, delay_ms: int = 0, **options: Any) -> list[Outcome]:
        v.duration_ms(delay_ms, "delay_ms", minimum=0)
        for held in leases:  # the whole batch is checked before the chunks are sent
            v.encode_id(held.id), v.token(held.token)
        chunks = [leases[start : start + 1000] for start in range(0, len(leases), 1000)]
        done = {
            i: WorkQueue.release_many(self, chunks[i], delay_ms=delay_ms)
            for i in reversed(range(len(chunks)))
        }
        return [outcome for i in range(len(chunks)) for outcome in done[i]]


if __name__ == "__main__":
    serve(ConcurrentChunksQueue)
