"""Mutant: the jitter's random integer is drawn from 0..499,999 (a ``randbelow(1_000_000) // 2``
slip), so delays are only ever shortened by up to half of ``jitter_pct``: a one-sided spread."""

from __future__ import annotations

import secrets

from _jitter import jitter_queue
from _mutant import serve

if __name__ == "__main__":
    serve(jitter_queue(lambda: secrets.randbelow(1_000_000) // 2))
