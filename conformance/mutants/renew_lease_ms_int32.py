"""Mutant: renew and renew_many keep lease_ms in a 32-bit int (Java's ``(int) leaseMs``), so a
lease time above 2^31 - 1 ms wraps: 31,536,000,000 ms is sent as 1,471,228,928."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease


def _int32(value: int) -> int:
    v.duration_ms(value, "lease_ms")  # checked as a long, then marshalled as an int
    return (value + 2**31) % 2**32 - 2**31


class Int32Queue(WorkQueue):
    def renew(self, lease: Lease, lease_ms: int) -> bool:
        return super().renew(lease, _int32(lease_ms))

    def renew_many(self, leases: Sequence[Lease], lease_ms: int) -> list[bool]:
        return super().renew_many(leases, _int32(lease_ms))


if __name__ == "__main__":
    serve(Int32Queue)
