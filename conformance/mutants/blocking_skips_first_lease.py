"""Mutant: a blocking lease starts with BLMOVE (reading the server time with ``TIME``) instead of
the non-blocking lease script, so a due delayed item is not promoted before it waits."""

from __future__ import annotations

from typing import Any

from _blocking import Blocking, blocking_queue
from _mutant import call, serve
from rwq.protocol.commands import Plan


class BlmoveFirst(Blocking):
    def first_step(self) -> Plan[list[Any]]:
        seconds, micros = yield call(self.keys, "TIME")
        return [0, int(seconds) * 1000 + int(micros) // 1000, -1]


if __name__ == "__main__":
    serve(blocking_queue(BlmoveFirst))
