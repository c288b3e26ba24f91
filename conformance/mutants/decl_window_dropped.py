"""Mutant: the client takes the window out of a finding call's reply but never declares it in the
next call, so every lease finds only undeclared ids and calls again forever (RWQ-DECL-003)."""

from __future__ import annotations

from collections.abc import Sequence

from rwq.conformance import reference_adapter
from rwq.protocol import declared
from rwq.protocol.commands import RunScript

declare_keys = declared.with_declared_keys


def _without_window(command: RunScript, window: Sequence[bytes]) -> RunScript:
    return declare_keys(command, ())


if __name__ == "__main__":
    declared.with_declared_keys = _without_window
    reference_adapter.main()
