"""Mutant: a blocking lease passes the flat setting to the lease script but not to ``claim``, so
an item it waited for stays in ``P:processing`` (RWQ-FLAT-001)."""

from __future__ import annotations

import dataclasses
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Command, RunScript


class ClaimNotFlatQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if isinstance(command, RunScript) and command.script.name == "claim":
            command = dataclasses.replace(command, args=(*command.args[:-1], b"0"))
        return super()._execute(command)


if __name__ == "__main__":
    serve(ClaimNotFlatQueue)
