"""Mutant: a blocking lease takes a ``claim`` that replied ``RWQ_WRONG_TYPE`` for a refused claim
(``[0]``) and goes back to waiting, so the caller never hears of the key of another type
(RWQ-SCRIPT-007). The wrong-type group has no claim: only the coverage matrix's
``paths/wrong-type/blocking-wait`` reaches one."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import WrongType
from rwq.protocol.commands import Command, RunScript


class ClaimWrongTypeQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        try:
            return super()._execute(command)
        except WrongType:
            if isinstance(command, RunScript) and command.script.name == "claim":
                return [0]
            raise


if __name__ == "__main__":
    serve(ClaimWrongTypeQueue)
