"""Mutant: a scheduler computes its due slots from its own host's clock instead of the now of
the server's replies (RWQ-SCHED-011, RWQ-TIME-001). The frozen server clock of the cases stands
years away from the adapter's clock."""

from __future__ import annotations

import dataclasses
import time

from _mutant import serve
from rwq.client import WorkQueue
from rwq.conformance import reference_adapter
from rwq.periodic import Scheduler
from rwq.protocol.periodic import Schedule, ScheduleList, StoredSchedule


class LocalClock(Scheduler):
    def due(self, listing: ScheduleList) -> list[tuple[StoredSchedule, Schedule, list[int]]]:
        return super().due(dataclasses.replace(listing, now_ms=int(time.time() * 1000)))


vars(reference_adapter)["Scheduler"] = LocalClock

if __name__ == "__main__":
    serve(WorkQueue)
