"""Mutant: the blocking lease gives BLMOVE its wait in whole seconds (``wait_ms / 1000`` in integer
arithmetic, as for redis-rs's old ``usize`` timeout), so a wait under a second becomes 0: no limit."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.commands import Call, Command


class WholeSecondsQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if isinstance(command, Call) and command.args[0] == "BLMOVE":
            *head, seconds = command.args
            command = Call((*head, int(float(seconds))), command.route_key)
        return super()._execute(command)


if __name__ == "__main__":
    serve(WholeSecondsQueue)
