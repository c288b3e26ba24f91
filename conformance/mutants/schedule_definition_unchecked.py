"""Mutant: a client writes the definition as given and leaves its checks to the script: a
definition SPEC 23.1 refuses goes out before it is refused (RWQ-SCHED-001, RWQ-ERR-002)."""

from __future__ import annotations

import json

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import periodic


def as_given(self: periodic.Schedule) -> periodic.Schedule:
    return self


def to_json(self: periodic.Schedule) -> bytes:
    doc = {"v": 1, "every_ms": self.every_ms, "offset_ms": self.offset_ms, "cron": self.cron}
    doc |= {"tz": self.tz, "missed": self.missed, "grace_ms": self.grace_ms}
    return json.dumps({k: v for k, v in doc.items() if v is not None}, default=str).encode()


periodic.Schedule.checked = as_given  # type: ignore[method-assign]
periodic.Schedule.to_json = to_json  # type: ignore[method-assign]

if __name__ == "__main__":
    serve(WorkQueue)
