"""Mutant: every key name of the layout is refused as a segment, so ``a:queue`` and ``a:dead`` are too."""

from __future__ import annotations

from _mutant import serve
from _prefix import checked_by
from rwq.protocol import validation as v

_LAYOUT = v.RESERVED_SEGMENTS | {"queue", "processing", "policy", "attempts", "dead", "delayed", "data"}

if __name__ == "__main__":
    serve(checked_by(lambda rest: bool(_LAYOUT.intersection(rest))))
