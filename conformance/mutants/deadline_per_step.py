"""Mutant: a blocking lease measures its timeout from the latest lease call instead of the first,
so every BLMOVE step that times out pushes the deadline back and it never gives up."""

from __future__ import annotations

from _blocking import Blocking, blocking_queue
from _mutant import serve


class DeadlinePerStep(Blocking):
    def update_deadline(self, now: int) -> None:
        if self.timeout_ms:
            self.deadline = now + self.timeout_ms


if __name__ == "__main__":
    serve(blocking_queue(DeadlinePerStep))
