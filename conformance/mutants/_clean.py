"""Shared parts of the cleaning mutants: a plan with its commands or replies rewritten by one bug."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rwq.protocol.commands import Command, Plan, RunScript, T


def rewritten(
    plan: Plan[T],
    *,
    command: Callable[[Command], Command] = lambda sent: sent,
    reply: Callable[[Command, Any], Any] = lambda sent, value: value,
) -> Plan[T]:
    """``plan`` with each command passed through ``command`` and each reply through ``reply``."""
    try:
        sent = command(next(plan))
        while True:
            sent = command(plan.send(reply(sent, (yield sent))))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def script(sent: Command, name: str, mode: bytes | None = None) -> bool:
    """Whether ``sent`` is a call of the canonical script ``name`` (in ``mode``, its first argument)."""
    return (
        isinstance(sent, RunScript)
        and sent.script.name == name
        and (mode is None or (bool(sent.args) and sent.args[0] == mode))
    )
