"""Mutant: scripts run through a redis-py client configured with ``Retry`` on connection errors
(a common production setting): a script whose reply was lost runs again, and the second run's
answer is reported as the first one's."""

from __future__ import annotations

from typing import Any

from redis.backoff import NoBackoff
from redis.exceptions import NoScriptError, RedisError
from redis.retry import Retry

from _mutant import serve
from rwq import _shell
from rwq.client import WorkQueue
from rwq.protocol.commands import Command, RunScript


class RetryingQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        if not isinstance(command, RunScript):
            return super()._execute(command)
        self._redis.set_retry(Retry(NoBackoff(), 3))
        args = _shell.script_args(command)
        try:
            try:
                return self._redis.evalsha(command.script.sha1, *args)
            except NoScriptError:
                return self._redis.eval(command.script.source, *args)
        except RedisError as exc:
            raise _shell.translate(exc) from exc


if __name__ == "__main__":
    serve(RetryingQueue)
