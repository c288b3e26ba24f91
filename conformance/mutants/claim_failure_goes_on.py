"""Mutant: a blocking lease treats a failed ``claim`` call like a refused one (``[0]``) and goes
back to its first step, although the claim may have run and leased the item under its token."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import RedisFailure
from rwq.protocol.commands import Command, RunScript


class ClaimGoesOnQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        try:
            return super()._execute(command)
        except RedisFailure:
            if isinstance(command, RunScript) and command.script.name == "claim":
                return [0]
            raise


if __name__ == "__main__":
    serve(ClaimGoesOnQueue)
