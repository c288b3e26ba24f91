"""Mutant: a client leaves the schedule name's check to the script: a name of 201 bytes, with an
@ or a space goes out before it is refused (RWQ-SCHED-001, RWQ-ERR-002)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import periodic


def unchecked(value: object) -> bytes:
    return str(value).encode("utf-8")


periodic.schedule_name = unchecked

if __name__ == "__main__":
    serve(WorkQueue)
