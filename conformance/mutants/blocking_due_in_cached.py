"""Mutant: a blocking lease runs the lease script again after a BLMOVE step only when its first
call reported a delayed item; an item delayed by another client while it waits is never promoted
for it."""

from __future__ import annotations

from _mutant import call, serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import MAX_BLOCK_STEP_MS, Lease, QueueKeys, new_token
from rwq.protocol.scripts import registry


def _blocking(keys: QueueKeys, lease_ms: int, timeout_ms: int, legacy: bool) -> Plan[Lease | None]:
    token, both, flag = new_token(), (keys.queue, keys.processing), b"1" if legacy else b"0"
    again, now, due_in, *entries = yield RunScript(registry()["lease"], both, (lease_ms, token, 1, flag, 0))
    deadline = now + timeout_ms if timeout_ms else None
    delayed_seen = due_in >= 0  # the bug: decided once, from the first call
    while True:
        if entries:
            raw_id, data, attempt = entries[0]
            return Lease(v.decode_id(raw_id), data, token, attempt)
        if not again:
            if deadline is not None and now >= deadline:
                return None
            wait_ms = MAX_BLOCK_STEP_MS if deadline is None else min(MAX_BLOCK_STEP_MS, deadline - now)
            if due_in >= 0:
                wait_ms = max(min(wait_ms, due_in), 1)
            moved = yield call(keys, "BLMOVE", keys.queue, keys.processing, "RIGHT", "LEFT", wait_ms / 1000)
            if moved is not None:
                claimed = yield RunScript(registry()["claim"], both, (moved, lease_ms, token, flag, 0))
                if claimed[0] == 1:
                    return Lease(v.decode_id(moved), claimed[1], token, claimed[2])
            elif not delayed_seen:
                now += wait_ms
                continue
        again, now, due_in, *entries = yield RunScript(
            registry()["lease"], both, (lease_ms, token, 1, flag, 0)
        )


class CachedDueInQueue(WorkQueue):
    def lease(self, lease_ms: int, *, block: bool = False, timeout_ms: int = 0) -> Lease | None:
        if not block:
            return super().lease(lease_ms)
        v.duration_ms(lease_ms, "lease_ms")
        v.duration_ms(timeout_ms, "timeout_ms", minimum=0)
        return self._run(_blocking(self.keys, lease_ms, timeout_ms, self.legacy_lease_key))


if __name__ == "__main__":
    serve(CachedDueInQueue)
