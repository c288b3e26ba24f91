"""Mutant: the client declares each window but leaves it in the reply it parses, so it reads the
window of a lease reply as a leased item (RWQ-DECL-003)."""

from __future__ import annotations

from typing import Any

from rwq.conformance import reference_adapter
from rwq.protocol import declared

split = declared.split_window


def _kept(name: str, reply: Any) -> tuple[Any, tuple[bytes, ...]]:
    return reply, split(name, reply)[1]


if __name__ == "__main__":
    declared.split_window = _kept
    reference_adapter.main()
