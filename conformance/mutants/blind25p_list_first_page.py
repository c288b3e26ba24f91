"""A port whose client reads one page of schedule list (HSCAN COUNT 1000) and stops, so a queue of
many schedules loses some: RWQ-SCHED-012."""

from _blind25p import patch, serve_reference
from rwq.protocol import periodic
from rwq.protocol.commands import Plan, RunScript
from rwq.protocol.operations import QueueKeys
from rwq.protocol.scripts import registry


def schedules(keys: QueueKeys) -> Plan[periodic.ScheduleList]:
    now, _cursor, rows = yield RunScript(
        registry()["schedule"], (keys.queue,), (b"list", b"0", periodic.LIST_COUNT)
    )
    found = {
        name.decode("ascii"): periodic.StoredSchedule(
            name.decode("ascii"), definition, data, periodic._ms(mark), periodic._ms(paused)
        )
        for name, definition, data, mark, paused in rows
    }
    return periodic.ScheduleList(int(now), [found[key] for key in sorted(found)])


patch(periodic, "schedules", schedules)

if __name__ == "__main__":
    serve_reference()
