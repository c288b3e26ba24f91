"""Mutant: with the profile ack setting on, the client WAITs after single adds and completes but
not after the calls of add_many and complete_many (RWQ-ACK-001)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.operations import Lease, Outcome


class SinglesOnlyQueue(WorkQueue):
    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        return self._run(ops.add(self.keys, items, delay_ms=delay_ms))

    def complete_many(self, items: Sequence[Lease | str], *, require_lease: bool = False) -> list[Outcome]:
        return self._run(ops.complete(self.keys, items, require_lease=require_lease))


if __name__ == "__main__":
    serve(SinglesOnlyQueue)
