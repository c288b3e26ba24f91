"""Blind mutant (RWQ-SEC-006, RWQ-DELAY-004): ``lease`` promotes due delayed items itself before it
leases, with a ``light_clean`` call (the port believes promotion is the cleaner's job): an
operation of several script calls whose first call is not the one a role may be refused, so an
operator's refused lease has already promoted (and requeued) items."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.operations import Lease


class PromoteFirstQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        v.duration_ms(lease_ms, "lease_ms")
        self.light_clean()
        return super().lease(lease_ms, block=block, timeout_ms=timeout_ms)


if __name__ == "__main__":
    serve(PromoteFirstQueue)
