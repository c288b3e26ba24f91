"""Mutant: a client sends ``fire`` again when its reply was lost (a retry on a connection error):
the second call answers with what the first did, and the caller never learns that the outcome
was unknown (RWQ-SCHED-011, RWQ-FAIL-004)."""

from __future__ import annotations

from collections.abc import Sequence

from _mutant import serve
from rwq.client import WorkQueue
from rwq.errors import RedisFailure
from rwq.protocol.periodic import Fired


class Resending(WorkQueue):
    def fire(self, name: str, digest: str, slots: Sequence[int]) -> Fired:
        try:
            return super().fire(name, digest, slots)
        except RedisFailure:
            return super().fire(name, digest, slots)


if __name__ == "__main__":
    serve(Resending)
