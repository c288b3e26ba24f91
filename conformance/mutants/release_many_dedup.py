"""Mutant: ``release_many`` sends each lease once and reports that outcome for every occurrence,
so a lease repeated in one batch is "released" twice."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


class DedupReleaseQueue(WorkQueue):
    def release_many(self, leases: Sequence[Lease], *, delay_ms: int = 0, **options: Any) -> list[Outcome]:
        unique = list(dict.fromkeys(leases))
        outcomes = dict(zip(unique, super().release_many(unique, delay_ms=delay_ms, **options), strict=True))
        return [outcomes[held] for held in leases]


if __name__ == "__main__":
    serve(DedupReleaseQueue)
