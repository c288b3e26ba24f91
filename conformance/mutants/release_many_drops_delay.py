"""Mutant: ``release_many`` ignores ``delay_ms``, so the batch goes back to the queue at once:
right for ``release``, wrong for ``release_many``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


class UndelayedReleaseQueue(WorkQueue):
    def release_many(self, leases: Sequence[Lease], *, delay_ms: int = 0, **options: Any) -> list[Outcome]:
        return super().release_many(leases)


if __name__ == "__main__":
    serve(UndelayedReleaseQueue)
