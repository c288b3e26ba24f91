"""Mutant: the light cleaner requeues every in-flight item, live leases included."""

from __future__ import annotations

from _mutant import raw_light_clean, serve
from rwq.client import WorkQueue
from rwq.protocol.operations import CleanReport


class EagerCleanerQueue(WorkQueue):
    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        return self._run(raw_light_clean(self.keys, lambda item_id: []))


if __name__ == "__main__":
    serve(EagerCleanerQueue)
