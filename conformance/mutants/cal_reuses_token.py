"""Mutant: ``complete_and_lease`` grants the next lease under the token of the lease it completes
(one token per worker) instead of a fresh one."""

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
    token = next((item.token for item in items if isinstance(item, Lease)), None) or ops.new_token()
    completed, (again, _now, _due_in, *entries) = yield RunScript(
        registry()["complete_and_lease"],
        (keys.queue, keys.processing),
        (lease_ms, token.encode(), count, b"1" if legacy else b"0", b"0", mode, *args),
    )
    outcomes = [Outcome(code) for code in completed]
    if entries or not again:
        return outcomes, ops._leases(entries, token)
    return outcomes, (yield from ops.lease(keys, lease_ms, count=count, legacy=legacy))


class TokenKeepingCompositeQueue(WorkQueue):
    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        return self._run(
            _complete_and_lease(
                self.keys, items, count, lease_ms, require_lease=require_lease, legacy=self.legacy_lease_key
            )
        )


if __name__ == "__main__":
    serve(TokenKeepingCompositeQueue)
