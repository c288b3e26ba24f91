"""Mutant: a lease token is a per-process sequence number ("lease 1, 2, 3..."), unique within one
process, so the first leases of two worker processes carry the same token and each worker can
renew, complete and release the other's lease."""

from __future__ import annotations

import itertools

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations

_next = itertools.count(1)


def _token() -> str:
    return f"lease-{next(_next)}"


if __name__ == "__main__":
    vars(operations)["new_token"] = _token
    serve(WorkQueue)
