"""Mutant: lease tokens are 8 hex digits (32 random bits), short enough to guess."""

from __future__ import annotations

import secrets

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations


def _short_token() -> str:
    return secrets.token_hex(4)


if __name__ == "__main__":
    operations.new_token = _short_token
    serve(WorkQueue)
