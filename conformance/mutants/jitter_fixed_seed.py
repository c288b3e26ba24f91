"""Mutant: the jitter comes from a process-wide PRNG with a constant seed (Go's math/rand before
1.20 without ``Seed``), so every worker process draws the same sequence and retries in lockstep."""

from __future__ import annotations

import random

from _jitter import jitter_queue
from _mutant import serve

_RNG = random.Random(1)

if __name__ == "__main__":
    serve(jitter_queue(lambda: _RNG.randrange(1_000_000)))
