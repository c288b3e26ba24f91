"""Blind mutant (RWQ-DECL-001, RWQ-RETRY-020): with profile declared-keys, the port finds the ids of
a ``release`` call at ARGV ``2, 4, ...`` (after ``delay_ms``) whatever its first word, so a
release with ``refund`` declares its delay and tokens as ids and not the items' keys."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from _mutant import serve
from rwq.client import WorkQueue
from rwq.protocol import declared
from rwq.protocol.commands import RunScript

_named_ids = declared.named_ids


def _shifted(command: RunScript) -> Sequence[Any]:
    if command.script.name == "release":
        return command.args[1::2]
    return _named_ids(command)


if __name__ == "__main__":
    vars(declared)["named_ids"] = _shifted
    serve(WorkQueue)
