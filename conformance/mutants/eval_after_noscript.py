"""Mutant: after a script's first ``NOSCRIPT`` the client remembers "not cached" and sends that
script whole with ``EVAL`` from then on, although the ``EVAL`` cached it again."""

from __future__ import annotations

from typing import Any

from redis.exceptions import NoScriptError, RedisError

from _mutant import serve
from rwq import _shell
from rwq.client import WorkQueue
from rwq.protocol.commands import Command, RunScript

UNCACHED: set[str] = set()


class StickyEvalQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if not isinstance(command, RunScript):
            return super()._execute(command)
        args = _shell.script_args(command)
        try:
            if command.script.name not in UNCACHED:
                try:
                    return self._redis.evalsha(command.script.sha1, *args)
                except NoScriptError:
                    UNCACHED.add(command.script.name)
            return self._redis.eval(command.script.source, *args)
        except RedisError as exc:
            raise _shell.translate(exc) from exc


if __name__ == "__main__":
    serve(StickyEvalQueue)
