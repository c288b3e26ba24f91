"""Mutant: ``complete_and_lease``, added later to the port, calls its script with ``EVALSHA`` and
no ``NOSCRIPT`` fallback: after ``SCRIPT FLUSH`` the consumer's fast path fails."""

from __future__ import annotations

from typing import Any

from redis.exceptions import RedisError

from _mutant import serve
from rwq import _shell
from rwq.client import WorkQueue
from rwq.protocol.commands import Command, RunScript


class CompositeEvalshaQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if not isinstance(command, RunScript) or command.script.name != "complete_and_lease":
            return super()._execute(command)
        try:
            return self._redis.evalsha(command.script.sha1, *_shell.script_args(command))
        except RedisError as exc:
            raise _shell.translate(exc) from exc


if __name__ == "__main__":
    serve(CompositeEvalshaQueue)
