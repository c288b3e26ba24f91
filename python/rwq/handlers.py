"""Handler kinds, sans-IO: which worker can run a callable (:class:`~rwq.Worker` runs plain
functions in threads, :class:`~rwq.AsyncWorker` awaits coroutine functions), told before any I/O.

A handler is ``async`` when calling it gives a coroutine by its definition: a coroutine function,
a bound method of one, an object whose ``__call__`` is one, or a ``functools.partial`` (nested
too) of any of these. Anything else callable is ``sync``. A sync callable that returns an awaitable
all the same (a plain wrapper around a coroutine function) is caught when it is first called: see
:func:`refuse_awaitables`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Literal, TypeVar

from .errors import InvalidType

__all__ = ["HandlerKind", "handler_kind", "refuse_awaitables", "require_kind"]

HandlerKind = Literal["sync", "async"]
WORKER_OF: dict[HandlerKind, str] = {"sync": "Worker", "async": "AsyncWorker"}
T = TypeVar("T")
R = TypeVar("R")


def handler_kind(handler: object) -> HandlerKind:
    """``async`` if calling ``handler`` gives a coroutine by its definition, else ``sync``."""
    while isinstance(handler, functools.partial):
        handler = handler.func
    if inspect.iscoroutinefunction(handler):  # functions, bound methods, markcoroutinefunction
        return "async"
    if inspect.isroutine(handler) or inspect.isclass(handler):
        return "sync"
    call = getattr(type(handler), "__call__", None)  # noqa: B004 - the instance's own method
    return "async" if inspect.iscoroutinefunction(call) else "sync"


def require_kind(handler: object, kind: HandlerKind, runner: str, *, instead: str | None = None) -> None:
    """Refuse (InvalidType, before any I/O) a handler that ``runner`` cannot run: it needs ``kind``;
    the message names ``instead`` (by default the worker that runs the other kind)."""
    found = handler_kind(handler)
    if found != kind:
        what = "a coroutine function (async)" if found == "async" else "a plain (sync) callable"
        raise InvalidType(
            f"{runner} runs {'async' if kind == 'async' else 'plain (sync)'} handlers, and "
            f"{_name(handler)} is {what}: use {instead or WORKER_OF[found]}"
        )


def refuse_awaitables(handler: Callable[[T], R]) -> Callable[[T], R]:
    """``handler``, made to raise InvalidType when a call returns an awaitable (a coroutine is
    closed first, so it never runs half-way and never warns 'never awaited'): the item then fails
    as an error, never counted completed without its work done."""

    @functools.wraps(handler)
    def call(job: T) -> R:
        result = handler(job)
        if inspect.isawaitable(result):
            close = getattr(result, "close", None)
            if callable(close):
                close()
            raise InvalidType(
                f"handler {_name(handler)} returned a {type(result).__name__}, which a Worker cannot "
                "await: declare it async def and run it with AsyncWorker"
            )
        return result

    return call


def _name(handler: object) -> str:
    """A short name for ``handler`` in messages."""
    return getattr(handler, "__qualname__", None) or repr(handler)
