"""Mutant: ``complete_and_lease`` checks its lease arguments and item count but sends the items'
ids and tokens unchecked, for the script to refuse."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import Lease, Outcome, QueueKeys, _leases, new_token
from rwq.protocol.scripts import registry


def _raw(item: Lease | str, require_lease: bool) -> list[bytes | str]:
    if isinstance(item, Lease):
        raw = item.id.encode("utf-8", "surrogateescape")
        return [raw, item.token] if require_lease else [raw]
    return [item.encode("utf-8", "surrogateescape")]


def _complete_and_lease(
    keys: QueueKeys,
    items: Sequence[Lease | str],
    lease_ms: int,
    count: int,
    *,
    require_lease: bool,
    legacy: bool,
) -> Plan[tuple[list[Outcome], list[Lease]]]:
    v.duration_ms(lease_ms, "lease_ms")
    v.batch_size(count, "count")
    v.batch_size(len(items), "items to complete")
    token = new_token()
    args = [part for item in items for part in _raw(item, require_lease)]
    mode = b"owner" if require_lease else b"any"
    completed, (_again, _now, _due, *entries) = yield RunScript(
        registry()["complete_and_lease"],
        (keys.queue, keys.processing),
        (lease_ms, token.encode(), count, int(legacy), 0, mode, *args),
    )
    return [Outcome(code) for code in completed], _leases(entries, token)


class TrustingItemsQueue(WorkQueue):
    def complete_and_lease_many(
        self, items: Sequence[Lease | str], count: int, lease_ms: int, *, require_lease: bool = False
    ) -> tuple[list[Outcome], list[Lease]]:
        return self._run(
            _complete_and_lease(
                self.keys, items, lease_ms, count, require_lease=require_lease, legacy=self.legacy_lease_key
            )
        )


if __name__ == "__main__":
    serve(TrustingItemsQueue)
