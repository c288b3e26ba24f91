"""Mutant: a blocking lease ignores its timeout: it goes on waiting, BLMOVE step after BLMOVE step,
until an item comes, so a lease with ``timeout_ms`` never returns nothing. A port with a blocking
lease this wrong hangs in every case that lets a timeout pass; the suite must fail each such case
within its release budget, saying how far it moved the server clock, and finish the whole run in
under a minute (``tests/test_conformance_budgets.py``)."""

from __future__ import annotations

from _blocking import Blocking, blocking_queue
from _mutant import serve


class IgnoresTimeout(Blocking):
    def expired(self, now: int) -> bool:
        return False  # the bug: the deadline never passes


if __name__ == "__main__":
    serve(blocking_queue(IgnoresTimeout))
