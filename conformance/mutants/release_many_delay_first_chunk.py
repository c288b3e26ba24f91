"""Mutant: release_many passes delay_ms with its first call of 1000 only; the leases past them
are released at once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease, Outcome


class DelayFirstChunkQueue(WorkQueue):
    def release_many(self, leases: Sequence[Lease], *, delay_ms: int = 0, **options: Any) -> list[Outcome]:
        v.duration_ms(delay_ms, "delay_ms", minimum=0)
        for held in leases:  # the whole batch is checked first; only the delay is lost
            v.encode_id(held.id), v.token(held.token)
        head = super().release_many(leases[:1000], delay_ms=delay_ms, **options)
        return head + (super().release_many(leases[1000:]) if len(leases) > 1000 else [])


if __name__ == "__main__":
    serve(DelayFirstChunkQueue)
