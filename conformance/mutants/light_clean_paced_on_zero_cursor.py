"""Mutant: a paced light clean sends ``pace_ms`` with every call at cursor 0, not only with the
pass's first call: a first chunk that requeues all it examined returns cursor 0, the next call
finds ``P:cleaned`` just set, and the pass ends early (RWQ-CLEAN-007)."""

from __future__ import annotations

import dataclasses

from _clean import rewritten
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Command, RunScript
from rwq.protocol.operations import CleanReport


class PacedAtZeroQueue(WorkQueue):
    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        def paced(sent: Command) -> Command:
            if isinstance(sent, RunScript) and sent.script.name == "light_clean" and sent.args == (0, chunk):
                return dataclasses.replace(sent, args=(0, chunk, pace_ms)) if pace_ms else sent
            return sent

        return self._run(rewritten(ops.light_clean(self.keys, chunk=chunk, pace_ms=pace_ms), command=paced))


if __name__ == "__main__":
    serve(PacedAtZeroQueue)
