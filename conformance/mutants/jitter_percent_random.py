"""Mutant: the jitter's random integer is drawn in the policy's percent scale, 0..99, instead of
0..999,999, so the shortening is at most a ten-thousandth of what it should be."""

from __future__ import annotations

import secrets

from _jitter import jitter_queue
from _mutant import serve

if __name__ == "__main__":
    serve(jitter_queue(lambda: secrets.randbelow(100)))
