"""Mutant: a scheduler keeps the definitions of its first tick for good (it reads the list again
only for the server's now): a replaced definition is fired with its old digest, stale every time,
and a schedule put later is never seen (RWQ-SCHED-012)."""

from __future__ import annotations

import dataclasses

from _mutant import serve
from rwq.client import WorkQueue
from rwq.conformance import reference_adapter
from rwq.periodic import Scheduler
from rwq.protocol.periodic import Schedule, ScheduleList, StoredSchedule


class Cached(Scheduler):
    first: ScheduleList | None = None

    def due(self, listing: ScheduleList) -> list[tuple[StoredSchedule, Schedule, list[int]]]:
        if self.first is None:
            self.first = listing
        return super().due(dataclasses.replace(self.first, now_ms=listing.now_ms))


vars(reference_adapter)["Scheduler"] = Cached

if __name__ == "__main__":
    serve(WorkQueue)
