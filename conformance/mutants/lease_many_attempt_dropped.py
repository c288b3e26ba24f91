"""Mutant: ``lease_many`` parses only id and payload of each leased entry and reports attempt 0:
right on the single-item path, wrong on the batch path."""

from __future__ import annotations

import dataclasses

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


class NoAttemptQueue(WorkQueue):
    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        return [dataclasses.replace(lease, attempt=0) for lease in super().lease_many(count, lease_ms)]


if __name__ == "__main__":
    serve(NoAttemptQueue)
