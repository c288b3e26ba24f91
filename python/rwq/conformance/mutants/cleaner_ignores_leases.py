"""Mutant: the light cleaner requeues every in-flight item, live leases included."""

from __future__ import annotations

from ...client import WorkQueue
from ...protocol.operations import CleanReport
from . import raw_light_clean, serve


class EagerCleanerQueue(WorkQueue):
    def light_clean(self, *, chunk: int = 100) -> CleanReport:
        return self._run(raw_light_clean(self.keys, lambda item_id: []))


if __name__ == "__main__":
    serve(EagerCleanerQueue)
