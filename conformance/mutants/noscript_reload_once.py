"""Mutant: ``NOSCRIPT`` is handled by reloading the scripts, but only once per process (a "scripts
reloaded" flag): after a second ``SCRIPT FLUSH`` (a second restart) every operation fails."""

from __future__ import annotations

from typing import Any

from redis.exceptions import NoScriptError, RedisError

from _mutant import serve
from rwq import _shell
from rwq.client import WorkQueue
from rwq.protocol.commands import Command, RunScript
from rwq.protocol.scripts import registry

RELOADED = [False]


class ReloadOnceQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if not isinstance(command, RunScript):
            return super()._execute(command)
        args = _shell.script_args(command)
        try:
            try:
                return self._redis.evalsha(command.script.sha1, *args)
            except NoScriptError:
                if RELOADED[0]:
                    raise
                RELOADED[0] = True
                for script in registry().values():
                    self._redis.script_load(script.source)
                return self._redis.evalsha(command.script.sha1, *args)
        except RedisError as exc:
            raise _shell.translate(exc) from exc


if __name__ == "__main__":
    serve(ReloadOnceQueue)
