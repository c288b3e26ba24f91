"""Mutant: ``complete_and_lease`` goes on with ``lease`` after ``again = 1`` only when the lease
part brought no item, so a partial reply ends the batch short (RWQ-LEASE-015, RWQ-NEXT-004)."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease, Outcome, QueueKeys
from rwq.protocol.scripts import registry


def _complete_and_lease(
    keys: QueueKeys,
    items: Sequence[Lease | str],
    count: int,
    lease_ms: int,
    *,
    require_lease: bool,
    legacy: bool,
) -> Plan[tuple[list[Outcome], list[Lease]]]:
    v.duration_ms(lease_ms, "lease_ms")
    v.batch_size(count, "count")
    mode, step, args = ops._completion(items, require_lease)
    v.batch_size(len(args) // step, "items to complete")
    token = ops.new_token()
    completed, (again, _now, _due_in, *entries) = yield RunScript(
        registry()["complete_and_lease"],
        (keys.queue, keys.processing),
        (lease_ms, token.encode(), count, b"1" if legacy else b"0", b"0", mode, *args),
    )
    leased = ops._leases(entries, token)
    if leased or not again:
        return [Outcome(code) for code in completed], leased
    more, _now, _due_in = yield from ops._lease_call(keys, lease_ms, token, count, legacy=legacy, flat=False)
    return [Outcome(code) for code in completed], more


class PartialCompositeQueue(WorkQueue):
    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        return self._run(
            _complete_and_lease(
                self.keys, items, count, lease_ms, require_lease=require_lease, legacy=self.legacy_lease_key
            )
        )


if __name__ == "__main__":
    serve(PartialCompositeQueue)
