"""Mutant: ``deep_clean`` sends every id it scanned to the requeue script, an older client's id
over 512 bytes included, so the script refuses the call and the clean fails."""

from __future__ import annotations

from typing import Any

from _clean import rewritten, script
from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import operations as ops
from rwq.protocol import validation as v
from rwq.protocol.commands import Call, Command, RunScript
from rwq.protocol.operations import CleanReport


class OverlongIdsQueue(WorkQueue):
    def deep_clean(self, *, chunk: int = 1000) -> CleanReport:
        item_prefix = self.keys.prefix.encode("utf-8") + b":item:"
        overlong: list[bytes] = []

        def scanned(sent: Command, reply: Any) -> Any:
            if isinstance(sent, Call) and sent.args[0] == "SCAN":
                overlong.extend(
                    key[len(item_prefix) :]
                    for key in reply[1]
                    if len(key) - len(item_prefix) > v.MAX_ID_BYTES
                )
            return reply

        def with_overlong(sent: Command) -> Command:
            if isinstance(sent, RunScript) and script(sent, "deep_clean", b"requeue") and overlong:
                sent = RunScript(sent.script, sent.keys, (*sent.args, *overlong))
                overlong.clear()
            return sent

        return self._run(
            rewritten(ops.deep_clean(self.keys, chunk=chunk), command=with_overlong, reply=scanned)
        )


if __name__ == "__main__":
    serve(OverlongIdsQueue)
