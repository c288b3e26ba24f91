"""Mutant: the cleaners (a separate tool in many ports) call ``EVALSHA`` without the ``NOSCRIPT``
fallback: after ``SCRIPT FLUSH`` every clean fails until something else reloads the script."""

from __future__ import annotations

from typing import Any

from redis.exceptions import RedisError

from _mutant import serve
from rwq import _shell
from rwq.client import WorkQueue
from rwq.protocol.commands import Command, RunScript

CLEANERS = frozenset({"light_clean", "deep_clean"})


class CleanerEvalshaQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if not isinstance(command, RunScript) or command.script.name not in CLEANERS:
            return super()._execute(command)
        try:
            return self._redis.evalsha(command.script.sha1, *_shell.script_args(command))
        except RedisError as exc:
            raise _shell.translate(exc) from exc


if __name__ == "__main__":
    serve(CleanerEvalshaQueue)
