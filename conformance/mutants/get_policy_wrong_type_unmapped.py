"""Mutant: ``get_policy`` reports a ``P:policy`` of another Redis type as ``REDIS_ERROR`` (the
server's WRONGTYPE passed on as is) rather than ``WRONG_TYPE`` (RWQ-RETRY-014)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import RedisFailure, WrongType
from rwq.protocol.operations import RetryPolicy

WRONGTYPE = "Operation against a key holding the wrong kind of value"


class UnmappedQueue(WorkQueue):
    def retry_policy(self) -> RetryPolicy | None:
        try:
            return super().retry_policy()
        except WrongType as exc:
            raise RedisFailure(f"ResponseError: WRONGTYPE {WRONGTYPE}") from exc


if __name__ == "__main__":
    serve(UnmappedQueue)
