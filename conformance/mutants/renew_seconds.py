"""Mutant: ``renew`` sends the lease time in seconds (``lease_ms // 1000``), as if it were EXPIRE."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


def _seconds(lease_ms: int) -> int:
    return lease_ms // 1000 or lease_ms


class SecondsRenewQueue(WorkQueue):
    def renew(self, lease: Lease, lease_ms: int) -> bool:
        return super().renew(lease, _seconds(lease_ms))

    def renew_many(self, leases: Sequence[Lease], lease_ms: int) -> list[bool]:
        return super().renew_many(leases, _seconds(lease_ms))


if __name__ == "__main__":
    serve(SecondsRenewQueue)
