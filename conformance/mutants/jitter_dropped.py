"""Mutant: ``fail`` always sends the random integer 0, so no delay is ever shortened (no jitter)."""

from __future__ import annotations

from _jitter import jitter_queue
from _mutant import serve

if __name__ == "__main__":
    serve(jitter_queue(lambda: 0))
