"""Mutant: ``requeue_dead``/``purge_dead`` send their ids unchecked and rely on the script's checks
(it refuses the call, after I/O)."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import QueueKeys
from rwq.protocol.scripts import registry


def _dead(keys: QueueKeys, action: bytes, ids: Sequence[str]) -> Plan[list[bool]]:
    done: list[bool] = []
    for start in range(0, len(ids), v.MAX_BATCH):
        raw = [item_id.encode("utf-8", "surrogateescape") for item_id in ids[start : start + v.MAX_BATCH]]
        reply = yield RunScript(registry()["dead"], (keys.queue,), (action, *raw))
        done.extend(bool(flag) for flag in reply)
    return done


class TrustingDeadQueue(WorkQueue):
    def requeue_dead(self, ids: Sequence[str]) -> list[bool]:
        return self._run(_dead(self.keys, b"requeue", ids))

    def purge_dead(self, ids: Sequence[str]) -> list[bool]:
        return self._run(_dead(self.keys, b"purge", ids))


if __name__ == "__main__":
    serve(TrustingDeadQueue)
