"""Mutant: every ``fail`` draws its jitter from a PRNG seeded with the current second, so all
failures within one second get the same delay (a thundering herd instead of a spread)."""

from __future__ import annotations

import random
import time

from _jitter import jitter_queue
from _mutant import serve


def _draw() -> int:
    return random.Random(int(time.time())).randrange(1_000_000)


if __name__ == "__main__":
    serve(jitter_queue(_draw))
