"""Mutant: ``light_clean`` never runs ``dead trim`` afterwards, so dead items outlive
``dead_max_age_ms`` on a queue where no ``fail`` dead-letters anything."""

from __future__ import annotations

from _mutant import serve
from _trim import no_trim, trim_queue
from rwq.protocol.operations import _trim_dead

if __name__ == "__main__":
    serve(trim_queue(no_trim, _trim_dead))
