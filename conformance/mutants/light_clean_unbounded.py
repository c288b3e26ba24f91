"""Mutant: ``light_clean`` examines the whole processing list in one script call (``max`` = its
length), unbounded work that the script refuses beyond 1000 entries."""

from __future__ import annotations

from _clean import rewritten, script
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Command, RunScript
from rwq.protocol.operations import CleanReport


class UnboundedQueue(WorkQueue):
    def light_clean(self, *, chunk: int = 100, pace_ms: int = 0) -> CleanReport:
        everything = max(1, self.processing_len())

        def whole_list(sent: Command) -> Command:
            if isinstance(sent, RunScript) and script(sent, "light_clean"):
                return RunScript(sent.script, sent.keys, (sent.args[0], everything))
            return sent

        return self._run(rewritten(ops.light_clean(self.keys, chunk=chunk), command=whole_list))


if __name__ == "__main__":
    serve(UnboundedQueue)
