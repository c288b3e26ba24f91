"""Blind mutant (issue #25): ``workers`` lists 10 workers when the caller gives no count, not the
100 the adapter protocol gives as the library's default (RWQ-LIVE-003: the live workers)."""

from __future__ import annotations

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol.live import LiveWorker


class TenQueue(WorkQueue):
    def workers(self, *, offset: int = 0, count: int = 10) -> list[LiveWorker]:
        return super().workers(offset=offset, count=count)


if __name__ == "__main__":
    serve(TenQueue)
