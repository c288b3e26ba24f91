"""Mutant: the light cleaner checks leases and items with plain reads, then requeues with
``LREM`` and ``LPUSH``: right answers, but the check and the requeue are separate commands that
another cleaner or a ``complete`` can run between."""

from __future__ import annotations

from _mutant import raw_light_clean, serve
from rwq.client import WorkQueue
from rwq.protocol.operations import CleanReport


class ClientCheckCleanerQueue(WorkQueue):
    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        keys = self.keys
        return self._run(
            raw_light_clean(keys, lambda item_id: [keys.lease(item_id), keys.legacy_lease(item_id)])
        )


if __name__ == "__main__":
    serve(ClientCheckCleanerQueue)
