"""Commands a plan asks its shell to run, and the plan type itself."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

from .scripts import Script

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Wait:
    """``WAIT replicas timeout_ms``, sent on the script call's connection right after it."""

    replicas: int
    timeout_ms: int


@dataclass(frozen=True, slots=True)
class RunScript:
    """EVALSHA the script (falling back to EVAL on NOSCRIPT); the reply is sent back.

    With ``wait``, the shell sends ``WAIT`` on the same connection in the same round trip and
    sends back ``(reply, replicas that acknowledged)``.
    """

    script: Script
    keys: tuple[bytes, ...]
    args: tuple[bytes | str | int, ...]
    wait: Wait | None = None


@dataclass(frozen=True, slots=True)
class Call:
    """A plain Redis command, routed on Redis Cluster to the node that holds ``route_key``.

    The shell sends back redis-py's parsed reply; with ``errors_as_values`` an error reply of the
    server (such as ``NOPERM``) is sent back as the exception object instead of being raised; a
    failed connection is raised all the same.
    """

    args: tuple[str | bytes | int | float, ...]
    route_key: bytes
    errors_as_values: bool = False


Command: TypeAlias = RunScript | Call
Plan: TypeAlias = Generator[Command, Any, T]
