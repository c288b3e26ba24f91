"""Mutant: a script call whose connection failed is sent again on a new connection ("reconnect and
resend"), although the first one may have run."""

from __future__ import annotations

from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError

from _mutant import serve
from rwq import _shell
from rwq.client import WorkQueue
from rwq.protocol.commands import Command, RunScript


class ResendQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if not isinstance(command, RunScript):
            return super()._execute(command)
        try:
            return _shell.run_script_once(self._redis, command)
        except RedisConnectionError:
            pass  # reconnect and send it again
        except _shell.FAILURES as exc:
            raise _shell.translate(exc) from exc
        try:
            return _shell.run_script_once(self._redis, command)
        except _shell.FAILURES as exc:
            raise _shell.translate(exc) from exc


if __name__ == "__main__":
    serve(ResendQueue)
