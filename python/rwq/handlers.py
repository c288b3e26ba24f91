"""Handler kinds, sans-IO: which worker can run a callable (:class:`~rwq.Worker` runs plain
functions in threads, :class:`~rwq.AsyncWorker` awaits coroutine functions), told before any I/O.

A handler is ``async`` when calling it gives a coroutine by its definition: a coroutine function,
a bound method of one, an object whose ``__call__`` is one, or a ``functools.partial`` (nested
too) of any of these. Anything else callable is ``sync``. A generator or async generator function
is neither: calling it runs none of its body, so it is refused (InvalidType) before any I/O. A
handler that returns something its worker cannot run to the end all the same (a plain wrapper
around a coroutine function, a generator, an ``async def`` that returns an un-awaited coroutine)
fails its item when it is called: see :func:`refuse_unrun`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Literal, TypeVar

from .errors import InvalidType

__all__ = ["HandlerKind", "checked_sync", "handler_kind", "refuse_unrun", "require_kind"]

HandlerKind = Literal["sync", "async"]
WORKER_OF: dict[HandlerKind, str] = {"sync": "Worker", "async": "AsyncWorker"}
T = TypeVar("T")
R = TypeVar("R")


def handler_kind(handler: object) -> HandlerKind:
    """``async`` if calling ``handler`` gives a coroutine by its definition, else ``sync``;
    InvalidType (before any I/O) for a generator or async generator function, which no worker
    can run: calling it only makes a generator, so its item would be completed unrun."""
    original = handler
    while isinstance(handler, functools.partial):
        handler = handler.func
    call = handler
    if not (inspect.isroutine(handler) or inspect.isclass(handler)):
        call = getattr(type(handler), "__call__", handler)  # noqa: B004 - the instance's own method
    if any(inspect.isgeneratorfunction(f) or inspect.isasyncgenfunction(f) for f in (handler, call)):
        what = "an async generator" if inspect.isasyncgenfunction(call) else "a generator"
        raise InvalidType(
            f"handler {_name(original)} is {what} function: calling it runs none of its body (it "
            "only makes a generator), so its items would be completed without their work done; "
            "make it a function that returns (async def for AsyncWorker)"
        )
    # functions, bound methods, markcoroutinefunction (and AsyncMock), async __call__
    return "async" if inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(call) else "sync"


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


def refuse_unrun(handler: object, result: object) -> None:
    """Raise InvalidType when ``result``, what ``handler`` returned (or its coroutine gave), is
    work not done: an awaitable or a generator. A coroutine or generator is closed first, so it
    never runs half-way and never warns 'never awaited'; the item then fails as an error, never
    counted completed without its work done."""
    if not (inspect.isawaitable(result) or inspect.isgenerator(result) or inspect.isasyncgen(result)):
        return
    close = getattr(result, "close", None)  # a coroutine's or a generator's
    if callable(close):
        close()
    raise InvalidType(
        f"handler {_name(handler)} returned a {type(result).__name__}, which is work not done: "
        "a handler does its work before it returns (async def awaited by AsyncWorker, with every "
        "coroutine it calls awaited)"
    )


def checked_sync(handler: Callable[[T], R]) -> Callable[[T], R]:
    """``handler``, made to fail (InvalidType, see :func:`refuse_unrun`) when a call returns an
    awaitable or a generator, which a Worker's thread cannot run."""

    @functools.wraps(handler)
    def call(job: T) -> R:
        result = handler(job)
        refuse_unrun(handler, result)
        return result

    return call


def _name(handler: object) -> str:
    """A short name for ``handler`` in messages."""
    return getattr(handler, "__qualname__", None) or repr(handler)
