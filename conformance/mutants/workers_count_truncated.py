"""Mutant: ``workers`` truncates a count or offset that is not an integer (``int(1.5)``, a
``parseInt``): ``count=1.5`` lists one worker instead of refusing the call (RWQ-ERR-004)."""

from __future__ import annotations

from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import live


class Truncating(WorkQueue):
    def workers(self, *, offset: Any = 0, count: Any = 100) -> list[live.LiveWorker]:
        return super().workers(offset=int(offset), count=int(count))


if __name__ == "__main__":
    serve(Truncating)
