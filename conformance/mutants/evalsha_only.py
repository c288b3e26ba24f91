"""Mutant: scripts are loaded once when a session opens and then only ever called with
``EVALSHA``: after ``SCRIPT FLUSH`` every operation fails with ``NOSCRIPT``."""

from __future__ import annotations

from typing import Any

from redis import Redis
from redis.cluster import RedisCluster
from redis.exceptions import RedisError

from _mutant import serve
from rwq import _shell
from rwq.client import WorkQueue
from rwq.protocol.commands import Command, RunScript
from rwq.protocol.scripts import registry


class EvalshaOnlyQueue(WorkQueue):
    def __init__(self, redis: Redis | RedisCluster, prefix: str, *, legacy_lease_key: bool = False) -> None:
        super().__init__(redis, prefix, legacy_lease_key=legacy_lease_key)
        for script in registry().values():
            self._redis.script_load(script.source)

    def _execute(self, command: Command) -> Any:
        if not isinstance(command, RunScript):
            return super()._execute(command)
        try:
            return self._redis.evalsha(command.script.sha1, *_shell.script_args(command))
        except RedisError as exc:
            raise _shell.translate(exc) from exc


if __name__ == "__main__":
    serve(EvalshaOnlyQueue)
