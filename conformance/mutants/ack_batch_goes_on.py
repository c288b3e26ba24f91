"""Mutant: with the profile ack setting on, add_many over 1000 items goes on with its next call
after a call's WAIT fell short, and reports NOT_REPLICATED only once every call ran (RWQ-ACK-004)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import NotReplicated
from rwq.protocol import operations as ops
from rwq.protocol.commands import Plan, RunScript

_short: list[str] = []


def acknowledged_later(command: RunScript) -> Plan[Any]:
    if command.wait is None:
        return (yield command)
    reply, replicas = yield command
    if replicas < command.wait.replicas:
        _short.append(command.script.name)
    return reply


class GoesOnQueue(WorkQueue):
    def add_many(self, items: Iterable[tuple[str, bytes]], *, delay_ms: int = 0) -> list[bool]:
        _short.clear()
        canonical, ops.acknowledged = ops.acknowledged, acknowledged_later
        try:
            added = self._run(ops.add(self.keys, items, delay_ms=delay_ms, wait=self.wait))
        finally:
            ops.acknowledged = canonical
        if _short:
            raise NotReplicated(f"{len(_short)} calls were not replicated")
        return added


if __name__ == "__main__":
    serve(GoesOnQueue)
