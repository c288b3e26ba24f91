"""Mutant: the client declares the DECLARED keys and the window's ids, but not the ids a call
names in ARGV, so every add, complete or release is refused by its script (RWQ-DECL-002)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rwq.conformance import reference_adapter
from rwq.protocol import declared
from rwq.protocol.commands import RunScript


def _none(command: RunScript) -> Sequence[Any]:
    return ()


if __name__ == "__main__":
    declared.named_ids = _none
    reference_adapter.main()
