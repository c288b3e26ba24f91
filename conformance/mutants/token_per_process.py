"""Mutant: one random token per process, drawn at start and used for every lease (a client id as
the lease token, as redis-work-queue's session id): long and unguessable, but not fresh per lease."""

from __future__ import annotations

import secrets

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations

_TOKEN = secrets.token_hex(16)


def _token() -> str:
    return _TOKEN


if __name__ == "__main__":
    vars(operations)["new_token"] = _token
    serve(WorkQueue)
