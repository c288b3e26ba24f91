"""Mutant: scripts are always sent whole with ``EVAL``, never by SHA with ``EVALSHA``."""

from __future__ import annotations

from typing import Any

from redis.exceptions import RedisError

from _mutant import serve
from rwq import _shell
from rwq.client import WorkQueue
from rwq.protocol.commands import Command, RunScript


class EvalQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if not isinstance(command, RunScript):
            return super()._execute(command)
        try:
            return self._redis.eval(command.script.source, *_shell.script_args(command))
        except RedisError as exc:
            raise _shell.translate(exc) from exc


if __name__ == "__main__":
    serve(EvalQueue)
