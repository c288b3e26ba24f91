"""Mutant: the port embeds the scripts with their comments stripped (a "minified" copy): its
hello still reports the manifest's SHA1s, but what it runs is not byte-identical to lua/."""

from __future__ import annotations

import hashlib
from typing import Any

from redis.exceptions import NoScriptError, RedisError

from _mutant import serve
from rwq import _shell
from rwq.client import WorkQueue
from rwq.protocol.commands import Command, RunScript


def _minified(source: bytes) -> bytes:
    return b"\n".join(line for line in source.splitlines() if not line.lstrip().startswith(b"--")) + b"\n"


class MinifiedQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if not isinstance(command, RunScript):
            return super()._execute(command)
        source = _minified(command.script.source)
        args = _shell.script_args(command)
        try:
            try:
                return self._redis.evalsha(hashlib.sha1(source).hexdigest(), *args)
            except NoScriptError:
                return self._redis.eval(source, *args)
        except RedisError as exc:
            raise _shell.translate(exc) from exc


if __name__ == "__main__":
    serve(MinifiedQueue)
