"""Mutant: a prefix is refused only when its last segment is reserved, so ``x:item:y`` is accepted."""

from __future__ import annotations

from _mutant import serve
from _prefix import checked_by
from rwq.protocol import validation as v

if __name__ == "__main__":
    serve(checked_by(lambda rest: bool(rest) and rest[-1] in v.RESERVED_SEGMENTS))
