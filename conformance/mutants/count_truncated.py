"""Mutant: counts that are not integers are truncated instead of refused, as ``Math.trunc`` or
``parseInt`` would: ``lease_many(count=1.5)`` leases one item, ``count="5"`` five (RWQ-ERR-004).
The boundary cases of the coverage matrix are the only ones that send such a count."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease, Outcome


def _truncated(value: object) -> Any:
    return int(float(value)) if isinstance(value, (float, str)) else value


class TruncatingQueue(WorkQueue):
    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        return super().lease_many(count=_truncated(count), lease_ms=lease_ms)

    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        return super().complete_and_lease_many(
            items, _truncated(count), lease_ms, require_lease=require_lease
        )


if __name__ == "__main__":
    serve(TruncatingQueue)
