"""Mutant: a flat lease made of two steps: the lease script without the setting, then the port's
own ``LREM`` and ``ZADD`` to move each leased id to ``P:in_flight`` (RWQ-FLAT-001). Between the
steps the id is in ``P:processing``, and a crash leaves it there; plain writes are forbidden."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease


class TwoStepQueue(WorkQueue):
    def _moved(self, plan: Plan[list[Lease]], lease_ms: int) -> Plan[list[Lease]]:
        leases = yield from plan
        now = yield call(self.keys, "TIME")
        deadline = int(now[0]) * 1000 + int(now[1]) // 1000 + lease_ms
        for one in leases:
            yield call(self.keys, "LREM", self.keys.processing, 1, v.encode_id(one.id))
            yield call(
                self.keys, "ZADD", self.keys.prefix.encode() + b":in_flight", deadline, v.encode_id(one.id)
            )
        return leases

    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        plan = ops.lease(self.keys, lease_ms, block=block, timeout_ms=timeout_ms)
        return self._run(ops.first(self._moved(plan, lease_ms)))

    def lease_many(self, count: int, lease_ms: int) -> list[Lease]:
        return self._run(self._moved(ops.lease(self.keys, lease_ms, count=count), lease_ms))


if __name__ == "__main__":
    serve(TwoStepQueue)
