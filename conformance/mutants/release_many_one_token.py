"""Mutant: ``release_many`` sends the first lease's token for every lease, as if a batch always
came from one ``lease_many`` call (which grants one token)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


class OneTokenReleaseQueue(WorkQueue):
    def release_many(self, leases: Sequence[Lease], *, delay_ms: int = 0, **options: Any) -> list[Outcome]:
        shared = [dataclasses.replace(held, token=leases[0].token) for held in leases] if leases else []
        return super().release_many(shared, delay_ms=delay_ms, **options)


if __name__ == "__main__":
    serve(OneTokenReleaseQueue)
