"""Mutant: with the profile ack setting on, the client WAITs after every script call, lease and
renew included, where SPEC 8.1 allows WAIT only after adds and completes (RWQ-ACK-001)."""

from __future__ import annotations

import dataclasses
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Command, RunScript


class WaitAlwaysQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if isinstance(command, RunScript) and command.wait is None and self.wait is not None:
            return super()._execute(dataclasses.replace(command, wait=self.wait))[0]
        return super()._execute(command)


if __name__ == "__main__":
    serve(WaitAlwaysQueue)
