"""Mutant: ``renew_many`` sends the first lease's token for every lease, as if a batch always came
from one ``lease_many`` call (which grants one token)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.operations import Lease


class OneTokenRenewQueue(WorkQueue):
    def renew_many(self, leases: Sequence[Lease], lease_ms: int) -> list[bool]:
        shared = [dataclasses.replace(held, token=leases[0].token) for held in leases] if leases else []
        return super().renew_many(shared, lease_ms)


if __name__ == "__main__":
    serve(OneTokenRenewQueue)
