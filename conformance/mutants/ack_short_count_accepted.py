"""Mutant: the client sends WAIT but takes any reply as success, so fewer replicas than asked
pass as acknowledged (RWQ-ACK-002)."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Plan, RunScript


def _any_count(command: RunScript) -> Plan[Any]:
    reply = yield command
    return reply if command.wait is None else reply[0]


if __name__ == "__main__":
    ops.acknowledged = _any_count
    serve(WorkQueue)
