"""Mutant: the client reads one page of ``schedule list`` and stops, whatever the cursor says: a
queue whose schedules hash is more than one HSCAN page loses schedules from every list and
every tick (RWQ-SCHED-020)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import periodic
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import QueueKeys
from rwq.protocol.periodic import ScheduleList, StoredSchedule
from rwq.protocol.scripts import registry


def _one_page(keys: QueueKeys) -> Plan[ScheduleList]:
    page = (b"list", b"0", periodic.LIST_COUNT)
    now, _cursor, rows = yield RunScript(registry()["schedule"], (keys.queue,), page)
    found = [
        StoredSchedule(name.decode("ascii"), definition, data, periodic._ms(mark), periodic._ms(paused))
        for name, definition, data, mark, paused in rows
    ]
    return ScheduleList(int(now), sorted(found, key=lambda s: s.name))


periodic.schedules = _one_page

if __name__ == "__main__":
    serve(WorkQueue)
