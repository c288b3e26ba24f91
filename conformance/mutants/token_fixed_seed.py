"""Mutant: lease tokens come from a PRNG with the same seed in every process (Go's ``math/rand``
before 1.20, or a seed from a coarse clock), so workers in different processes mint the same
tokens and each can renew, complete and release the other's leases."""

from __future__ import annotations

import random

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations

_rng = random.Random(1)


def _token() -> str:
    return f"{_rng.getrandbits(128):032x}"


if __name__ == "__main__":
    vars(operations)["new_token"] = _token
    serve(WorkQueue)
