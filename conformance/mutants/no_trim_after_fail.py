"""Mutant: ``fail`` that dead-letters an item does not run ``dead trim`` afterwards (only the
cleaner trims), so ``dead_max_count`` is exceeded until the next clean."""

from __future__ import annotations

from _mutant import serve
from _trim import no_trim, trim_queue
from rwq.protocol.operations import _trim_dead

if __name__ == "__main__":
    serve(trim_queue(_trim_dead, no_trim))
