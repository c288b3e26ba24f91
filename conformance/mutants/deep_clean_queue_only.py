"""Mutant: ``deep_clean`` indexes ``P:queue`` twice (a copied list name) and never
``P:processing``, so ghosts in the processing list stay."""

from __future__ import annotations

from _clean import rewritten, script
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol.commands import Command, RunScript
from rwq.protocol.operations import CleanReport


def _queue_twice(sent: Command) -> Command:
    if isinstance(sent, RunScript) and script(sent, "deep_clean", b"index"):
        return RunScript(sent.script, sent.keys, (b"index", b"queue", *sent.args[2:]))
    return sent


class QueueOnlyQueue(WorkQueue):
    def deep_clean(self, *, chunk: int = 1000) -> CleanReport:
        return self._run(rewritten(ops.deep_clean(self.keys, chunk=chunk), command=_queue_twice))


if __name__ == "__main__":
    serve(QueueOnlyQueue)
