"""Mutant: an error reply from Redis that is not an ``RWQ_`` script error (WRONGTYPE) escapes as
the Redis library's own exception instead of REDIS_ERROR."""

from __future__ import annotations

from typing import Any

from redis.exceptions import ResponseError

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import RedisFailure
from rwq.protocol.commands import Command


class LeakyQueue(WorkQueue):
    def _execute(self, command: Command) -> Any:
        try:
            return super()._execute(command)
        except RedisFailure as exc:
            if isinstance(exc.__cause__, ResponseError):
                raise exc.__cause__ from None
            raise


if __name__ == "__main__":
    serve(LeakyQueue)
