"""Mutant: ``add`` marshals its ARGV in the layout of an older draft, without the leading
``delay_ms``: the script reads the first id as the delay and refuses the call."""

from __future__ import annotations

import dataclasses
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Command, RunScript


class NoDelayArgQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if isinstance(command, RunScript) and command.script.name == "add":
            command = dataclasses.replace(command, args=command.args[1:])
        return super()._execute(command)


if __name__ == "__main__":
    serve(NoDelayArgQueue)
