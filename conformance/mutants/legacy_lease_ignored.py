"""Mutant: the light cleaner reads only ``P:lease:<id>`` and requeues items that an older
client holds through ``P:leased_by_session:<id>``."""

from __future__ import annotations

from _mutant import raw_light_clean, serve
from rwq.client import WorkQueue
from rwq.protocol.operations import CleanReport


class G2CleanerQueue(WorkQueue):
    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        return self._run(raw_light_clean(self.keys, lambda item_id: [self.keys.lease(item_id)]))


if __name__ == "__main__":
    serve(G2CleanerQueue)
