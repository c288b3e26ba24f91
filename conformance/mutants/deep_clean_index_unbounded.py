"""Mutant: ``deep_clean`` indexes each list in one script call (``max`` = the list's length),
unbounded work that the script refuses beyond 1000 entries."""

from __future__ import annotations

from _clean import rewritten, script
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Command, RunScript
from rwq.protocol.operations import CleanReport


class IndexUnboundedQueue(WorkQueue):
    def deep_clean(self, *, chunk: int = 1000) -> CleanReport:
        counts = self.counts()
        lengths: dict[object, int] = {
            b"queue": max(1, counts.queued),
            b"processing": max(1, counts.processing),
        }

        def whole_list(sent: Command) -> Command:
            if isinstance(sent, RunScript) and script(sent, "deep_clean", b"index"):
                _mode, name, start, _max = sent.args
                return RunScript(sent.script, sent.keys, (b"index", name, start, lengths[name]))
            return sent

        return self._run(rewritten(ops.deep_clean(self.keys, chunk=chunk), command=whole_list))


if __name__ == "__main__":
    serve(IndexUnboundedQueue)
