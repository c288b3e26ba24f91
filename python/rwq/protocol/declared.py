"""Profile declared-keys (SPEC §20): every script call passes every key it touches in KEYS.

A plan is written for the core call shape. :func:`declare` wraps it: each script call gets the
script's DECLARED keys (its header's ``-- DECLARED`` line), then one key triple (item, lease,
legacy lease) per id it names in ARGV and per id of the last window the same kind of call
replied with. The window is taken out of the reply before the plan sees it, so plans stay
unaware of the profile. A script that finds an id outside its window stops there and asks to
be called again (RWQ-DECL-004), which the plans already do for their own reasons.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from ..errors import RwqError
from .commands import Plan, RunScript, T
from .scripts import Script

Windows = dict[tuple[bytes, bytes], tuple[bytes, ...]]
"""The last window per queue prefix and kind of finding call, kept by the queue handle."""


@cache
def declared_names(script: Script) -> tuple[bytes, ...]:
    """The key names (after ``P:``) of the script's DECLARED header line; () without one."""
    for line in script.source.splitlines():
        if line.startswith(b"-- DECLARED "):
            return tuple(re.findall(rb"<P>:(\S+)", line))
    return ()


@cache
def core_keys(script: Script) -> int:
    """How many KEYS the script takes in its core shape: its header's ``-- KEYS[n]`` lines."""
    header = itertools.takewhile(lambda line: line.startswith(b"--"), script.source.splitlines())
    return sum(1 for line in header if re.match(rb"-- KEYS\[\d+\]", line))


MAX_SLACK, MAX_DUE = 64, 100
"""The most a lease's window holds beyond its count: the slack, and the due ids (SPEC §20)."""


def window_bound(command: RunScript) -> int:
    """The most ids a window this call may declare can hold (RWQ-DECL-003): what the last reply
    of its kind could have carried, for a caller that keeps the same count or chunk."""
    kind, args = window_kind(command), command.args
    if kind == b"lease":
        return int(args[2]) + MAX_SLACK + MAX_DUE
    if kind == b"light_clean":
        return 3 * int(args[1])  # the next chunk, due ids and expired in-flight ids, max each
    if kind is not None:
        return int(args[3])  # deep_clean index: its next chunk
    return 0


def named_ids(command: RunScript) -> Sequence[Any]:
    """The ids whose keys the call names in ARGV, as each script's header lays out its ARGV."""
    name, args = command.script.name, command.args
    if name == "add":
        return args[1::2]
    if name == "release":  # [b"refund",] delay_ms, then id, token pairs
        return args[2::2] if args[0] == b"refund" else args[1::2]
    if name == "renew":
        return args[2::2]
    if name in ("claim", "fail"):
        return args[:1]
    if name == "complete":
        return args[1 :: 2 if args[0] == b"owner" else 1]
    if name == "complete_and_lease":
        return args[6 :: 2 if args[5] == b"owner" else 1]
    if name == "fire":  # name, digest, slots: the ids <name>@<slot> (SPEC §23)
        return [_raw(args[0]) + b"@" + _raw(slot) for slot in args[2:]]
    if name in ("dead", "deep_clean") and args[:1] == (b"requeue",):
        return args[1:]
    return ()


def window_kind(command: RunScript) -> bytes | None:
    """Which window a finding call declares and replies with; None for a call that finds no id."""
    name = command.script.name
    if name in ("lease", "complete_and_lease"):
        return b"lease"
    if name == "light_clean":
        return b"light_clean"
    if name == "deep_clean" and command.args[0] == b"index":
        return b"deep_clean:" + _raw(command.args[1])
    return None


def _raw(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


def with_declared_keys(command: RunScript, window: Sequence[bytes]) -> RunScript:
    """``command`` with every key its script may touch in KEYS (RWQ-DECL-002)."""
    names = declared_names(command.script)
    if not names:
        return command  # the script's KEYS already hold every key it touches
    base = command.keys[0][: -len(b"queue")]  # P: (RWQ-SCRIPT-005)
    ids = dict.fromkeys([*map(_raw, named_ids(command)), *window])  # once each, in order
    triples = [
        base + kind + item_id for item_id in ids for kind in (b"item:", b"lease:", b"leased_by_session:")
    ]
    keys = (*command.keys, *(base + name for name in names), *triples)
    return RunScript(command.script, keys, command.args, command.wait)


WINDOW_AT = {"lease": 3, "light_clean": 5, "deep_clean": 2}
"""Where each finding script's reply carries the window (RWQ-DECL-003)."""


def split_window(name: str, reply: Any) -> tuple[Any, tuple[bytes, ...]]:
    """A finding call's reply without its window, and the window."""
    if name == "complete_and_lease":
        completed, leased = reply
        leased, window = split_window("lease", leased)
        return [completed, leased], window
    at = WINDOW_AT[name]
    return [*reply[:at], *reply[at + 1 :]], tuple(reply[at])


def declare(plan: Plan[T], windows: Windows) -> Plan[T]:
    """Run ``plan`` with profile declared-keys: every script call declares its keys, and each
    finding call's window is kept in ``windows`` for the next call of its kind."""
    try:
        command = next(plan)
        while True:
            call = command if isinstance(command, RunScript) else None
            kind = None if call is None else window_kind(call)
            key = None if call is None or kind is None else (call.keys[0], kind)  # where its window is kept
            sent = command if call is None else with_declared_keys(call, windows.get(key, ()) if key else ())
            try:
                reply = yield sent
            except RwqError as exc:
                command = plan.throw(exc)
                continue
            if call is not None and key is not None:
                if call.wait is None:
                    reply, windows[key] = split_window(call.script.name, reply)
                else:  # (reply, replicas that acknowledged)
                    inner, windows[key] = split_window(call.script.name, reply[0])
                    reply = (inner, reply[1])
            command = plan.send(reply)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
