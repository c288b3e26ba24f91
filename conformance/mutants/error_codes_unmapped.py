"""Mutant: every error reply of a script is reported as ``REDIS_ERROR``; the ``RWQ_<CODE>`` prefix
is never mapped, so a caller cannot tell ``LEASE_LOST`` from a failed server."""

from __future__ import annotations

from redis.exceptions import RedisClusterException, RedisError

from _mutant import serve
from rwq import _shell
from rwq.errors import RedisFailure, RwqError


def _translate(exc: RedisError | RedisClusterException) -> RwqError:
    return RedisFailure(f"{type(exc).__name__}: {exc}")


if __name__ == "__main__":
    _shell.translate = _translate
    from rwq.client import WorkQueue

    serve(WorkQueue)
