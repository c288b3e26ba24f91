"""Mutant: batches (``add_many`` and the other ``*_many`` calls of more than one element) go through
a separate code path that calls ``EVALSHA`` without the ``NOSCRIPT`` fallback."""

from __future__ import annotations

from typing import Any

from redis.exceptions import RedisError

from _mutant import serve
from rwq import _shell
from rwq.client import WorkQueue
from rwq.protocol.commands import Command, RunScript


class BatchEvalshaQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if not isinstance(command, RunScript) or command.script.name != "add" or len(command.args) <= 3:
            return super()._execute(command)
        try:
            return self._redis.evalsha(command.script.sha1, *_shell.script_args(command))
        except RedisError as exc:
            raise _shell.translate(exc) from exc


if __name__ == "__main__":
    serve(BatchEvalshaQueue)
