"""Mutant: only the segment ``item`` is refused, so ``a:lease`` and ``jobs:lease:eu`` are accepted."""

from __future__ import annotations

from _mutant import serve
from _prefix import checked_by

if __name__ == "__main__":
    serve(checked_by(lambda rest: "item" in rest))
