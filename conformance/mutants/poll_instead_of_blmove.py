"""Mutant: a blocking lease polls, calling the non-blocking lease every 50 ms until its deadline,
instead of waiting in ``BLMOVE``: it never blocks in Redis and answers an add up to 50 ms late."""

from __future__ import annotations

import time

from _blocking import Blocking, blocking_queue
from _mutant import serve
from rwq.protocol import validation as v
from rwq.protocol.commands import Plan
from rwq.protocol.operations import Lease


class Polling(Blocking):
    def plan(self) -> Plan[Lease | None]:
        while True:
            _again, now, _due_in, *entries = yield from self.lease_script()
            self.update_deadline(now)
            if entries:
                raw_id, data, attempt = entries[0]
                return Lease(v.decode_id(raw_id), data, self.token, attempt)
            if self.expired(now):
                return None
            time.sleep(0.05)


if __name__ == "__main__":
    serve(blocking_queue(Polling))
