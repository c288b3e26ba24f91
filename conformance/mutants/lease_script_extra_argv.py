"""Mutant: the port appends its blocking timeout to the ``lease`` script's ARGV (a fifth entry
the script never had), which the script refuses (RWQ-SCRIPT-008) instead of ignoring it."""

from __future__ import annotations

import dataclasses
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Command, RunScript


class ExtraArgvQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if isinstance(command, RunScript) and command.script.name == "lease":
            command = dataclasses.replace(command, args=(*command.args, 0))
        return super()._execute(command)


if __name__ == "__main__":
    serve(ExtraArgvQueue)
