"""Mutant: with the profile ack setting on, the client WAITs after adds only, so completes are
reported done while no replica has them (RWQ-ACK-001)."""

from __future__ import annotations

import dataclasses
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Command, RunScript


class AddsOnlyQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if isinstance(command, RunScript) and command.wait is not None and command.script.name != "add":
            return super()._execute(dataclasses.replace(command, wait=None)), command.wait.replicas
        return super()._execute(command)


if __name__ == "__main__":
    serve(AddsOnlyQueue)
