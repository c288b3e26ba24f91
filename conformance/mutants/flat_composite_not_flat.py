"""Mutant: ``complete_and_lease`` leaves the flat setting out of the composite script's
arguments, so the item it leases goes to ``P:processing`` (RWQ-FLAT-001)."""

from __future__ import annotations

import dataclasses
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Command, RunScript


class CompositeNotFlatQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if isinstance(command, RunScript) and command.script.name == "complete_and_lease":
            args = command.args
            command = dataclasses.replace(command, args=(*args[:4], b"0", *args[5:]))
        return super()._execute(command)


if __name__ == "__main__":
    serve(CompositeNotFlatQueue)
