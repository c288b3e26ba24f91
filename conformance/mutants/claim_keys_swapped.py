"""Mutant: the blocking lease passes ``claim`` its KEYS in the wrong order (``P:processing``
first, as in BLMOVE's destination-last reading): the script refuses every claim."""

from __future__ import annotations

import dataclasses
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Command, RunScript


class SwappedClaimQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if isinstance(command, RunScript) and command.script.name == "claim":
            command = dataclasses.replace(command, keys=command.keys[::-1])
        return super()._execute(command)


if __name__ == "__main__":
    serve(SwappedClaimQueue)
