"""Wire checks: what the subject's sessions send to Redis, seen through ``MONITOR``.

With a managed Redis the runner traces every case: it opens a ``MONITOR`` connection before the
case's sessions, marks each step with an ``ECHO``, and afterwards attributes every command to a
session by its connection's ``CLIENT SETNAME`` name (the commands a script runs, ``[0 lua]``,
belong to the script call just before them). The subject's sessions, and connections that never
named themselves, must:

* write only through canonical scripts (RWQ-SCRIPT-001) and send, besides ``EVALSHA``/``EVAL``
  and ``SCRIPT LOAD`` of scripts in ``lua/manifest.json``, only the commands of :data:`ALLOWED`
  (RWQ-SCRIPT-006): no read of a queue key outside a script (a ``GET`` of a lease key to check
  ownership before the script is a check-then-act race), and never ``KEYS`` (RWQ-DEEP-004);
* touch only keys under their queue's prefix ``P:``, in their own commands and in the commands
  their scripts run (RWQ-KEYS-006); ``SCAN`` must ``MATCH`` inside ``P:``, and ``BLMOVE`` must be
  ``BLMOVE P:queue P:processing RIGHT LEFT t`` with ``0 < t <= 1`` s (RWQ-LEASE-008, RWQ-LEASE-012);
  a session of a sharded queue ``P`` touches only its shards ``{P#i}:`` and its doorbell, and
  waits with ``BLPOP {P#bell} t``, never ``BLMOVE`` (RWQ-SHARD-007);
* call scripts with ``EVALSHA``, and use ``EVAL`` (or ``SCRIPT LOAD``) only to retry an
  ``EVALSHA`` that hit ``NOSCRIPT``, which they must always retry (RWQ-SCRIPT-002). The runner
  knows which scripts the server holds: it asks ``SCRIPT EXISTS`` when the trace starts and
  follows ``SCRIPT FLUSH``, ``SCRIPT LOAD`` and ``EVAL`` through the trace;
* send ``WAIT`` (profile ``ack``) only on the connection of a script call of :data:`ACKNOWLEDGED`,
  right after it (RWQ-ACK-001);
* run the operations of :data:`ONE_SCRIPT` as one call of their own script: the first script a
  session runs in such a step must be that one, with its first ARGV where given
  (``complete_and_lease`` made of a ``complete`` and a ``lease`` call would let another client in
  between, RWQ-NEXT-001; so would a ``set_policy_if_absent`` that reads the policy first and then
  writes it with a plain ``set_policy``, RWQ-RETRY-015);
* send nothing at all in a step marked ``sends_nothing`` or answered with ``INVALID_ARGUMENT``
  (an invalid call, refused before any I/O, RWQ-ERR-002), connection handshakes
  (:data:`HANDSHAKE`) aside.
"""

from __future__ import annotations

import codecs
import hashlib
import re
import socket
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from redis.exceptions import ResponseError

from ..protocol import declared
from ..protocol.commands import RunScript
from ..protocol.scripts import registry
from . import data

if TYPE_CHECKING:
    from .environment import RedisEnvironment

ALLOWED = frozenset(
    {
        # opening a connection, and Redis Cluster's topology
        (b"HELLO",),
        (b"AUTH",),
        (b"SELECT",),
        (b"CLIENT", b"SETNAME"),
        (b"CLIENT", b"SETINFO"),
        (b"PING",),
        (b"ECHO",),
        (b"READONLY",),
        (b"ASKING",),
        (b"COMMAND",),
        (b"CLUSTER", b"SLOTS"),
        (b"CLUSTER", b"SHARDS"),
        (b"CLUSTER", b"NODES"),
        # the server checks (SPEC 11, from INFO: never CONFIG, RWQ-SERVER-004), the script cache
        (b"INFO",),
        (b"SCRIPT", b"EXISTS"),
        # the blocking lease, deep_clean, and reading the retry policy (shapes checked below)
        (b"BLMOVE",),
        (b"BLPOP",),
        (b"WAIT",),
        (b"SCAN",),
        (b"HGETALL",),
    }
)
"""Every non-script command a session may send (name, or name and subcommand): RWQ-SCRIPT-006."""
# Operations that are one call of one script, and the first ARGV that call must have, if any.
ONE_SCRIPT: dict[str, tuple[str, bytes | None]] = {
    "complete_and_lease": ("complete_and_lease", None),
    "set_policy_if_absent": ("set_policy", b"default"),
}
ACKNOWLEDGED = frozenset({"add", "complete", "complete_and_lease"})  # the scripts a WAIT may follow
"""Adapter methods that must be a single call of the named canonical script."""
HANDSHAKE = frozenset(
    {(b"HELLO",), (b"AUTH",), (b"SELECT",), (b"CLIENT", b"SETNAME"), (b"CLIENT", b"SETINFO")}
)
"""What opening a connection sends; allowed in a ``sends_nothing`` step (it is not the operation's I/O)."""
RUNNER_NAMES = frozenset({"rwqc-runner", "rwqc-wire"})
MAX_BLMOVE_S = 1.0

_LINE = re.compile(rb"^\+(\d+\.\d+) \[(\d+) (.*?)\] (.*)$", re.DOTALL)
_HEAD = re.compile(rb'^\+\d+\.\d+ \[\d+ (\S+)\] "([^"]*)"')
"""A MONITOR line's client and command name, read without parsing the arguments."""
_PUSHES = frozenset({b"LPUSH", b"RPUSH", b"LPUSHX", b"RPUSHX", b"LINSERT", b"LSET", b"ZADD", b"SADD"})
"""Commands whose arguments after the key may be ids put in a list or set (scores too: harmless)."""
_FIELDS = frozenset({b"HSET", b"HMSET", b"HSETNX"})
"""Commands whose fields may be ids."""
LEARNED = _PUSHES | _FIELDS | frozenset({b"SET", b"SETNX", b"PSETEX", b"SETEX", b"RESTORE"})
"""Commands that may put an id in the queue: in an element, a field or a key ``P:item:<id>``."""
RUNNER_TRACED = frozenset({b"ECHO", b"EVAL", b"EVALSHA", b"SCRIPT", b"CLIENT", b"HELLO"})
"""The runner's own commands the trace still reads: its step markers, the scripts it loads into
the server's cache (the checks follow which scripts the server holds), and naming connections.
Its writes that may put an id in a key or an element (:data:`LEARNED`) are read too, so that the
declared-keys check knows every id a window can hold. Its other commands (reads of the state) and
what its scripts run concern no check, so :meth:`Trace.finish` skips them unparsed."""
_QUOTED = rb'"((?:[^"\\]+|\\.)*)"'
_ARGS = re.compile(_QUOTED + rb"(?: " + _QUOTED + rb")*")
_ARG = re.compile(_QUOTED)


class WireError(Exception):
    """The trace could not be taken (the MONITOR connection failed or fell silent)."""


@dataclass(frozen=True)
class Seen:
    """One MONITOR line: the client (``lua`` for a command a script ran, else its address) and
    the command's arguments."""

    client: str
    args: tuple[bytes, ...]

    @property
    def name(self) -> bytes:
        return self.args[0].upper() if self.args else b""

    def sub(self) -> bytes:
        return self.args[1].upper() if len(self.args) > 1 else b""


def parse_line(line: bytes) -> Seen | None:
    """A MONITOR line (``+<time> [<db> <client>] "CMD" "arg" ...``), or None if it is not one.

    Redis escapes arguments with ``sdscatrepr`` (``\\n \\r \\t \\a \\b \\" \\\\ \\xHH``), a subset of
    what ``codecs.escape_decode`` undoes."""
    match = _LINE.match(line.rstrip(b"\r\n"))
    if match is None or _ARGS.fullmatch(match[4]) is None:
        return None
    args = tuple(codecs.escape_decode(arg[1])[0] for arg in _ARG.finditer(match[4]))
    return Seen(match[3].decode("ascii", "replace"), args)


def show(args: tuple[bytes, ...], limit: int = 160) -> str:
    """A command as text for a failure message, shortened."""
    text = " ".join(arg.decode("utf-8", "backslashreplace")[:60] for arg in args)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class CommandSpec:
    """What ``COMMAND INFO`` says about one command: flags and legacy key positions."""

    flags: frozenset[bytes]
    first: int
    last: int
    step: int
    container: bool


_SPECS: dict[tuple[str, bytes], CommandSpec | None] = {}
"""``COMMAND INFO`` answers by server version and command name."""


class CommandTable:
    """Command specs of one server (``COMMAND INFO``, cached by version) and key extraction."""

    def __init__(self, client: Any, version: str) -> None:
        self.client = client
        self.version = version

    def _entry(self, name: bytes) -> CommandSpec | None:
        if (self.version, name) not in _SPECS:
            reply = self.client.execute_command("COMMAND", "INFO", name)
            entry = reply[0] if reply else None
            _SPECS[self.version, name] = (
                None
                if entry is None
                else CommandSpec(
                    frozenset(flag.lower() for flag in entry[2]),
                    int(entry[3]),
                    int(entry[4]),
                    int(entry[5]),
                    len(entry) > 9 and bool(entry[9]),
                )
            )
        return _SPECS[self.version, name]

    def spec(self, args: tuple[bytes, ...]) -> CommandSpec | None:
        """The command's spec (its subcommand's, for containers such as ``CONFIG``), or None."""
        name = args[0].lower()
        entry = self._entry(name)
        if entry is not None and entry.container and len(args) > 1:
            return self._entry(name + b"|" + args[1].lower())
        return entry

    def keys(self, args: tuple[bytes, ...]) -> list[bytes]:
        """The keys a command touches (``COMMAND GETKEYS`` for commands with movable keys)."""
        spec = self.spec(args)
        if spec is None:
            return []
        if b"movablekeys" in spec.flags:
            try:
                return list(self.client.execute_command("COMMAND", "GETKEYS", *args))
            except ResponseError:
                return []
        if spec.first <= 0:
            return []
        last = spec.last if spec.last >= 0 else len(args) + spec.last
        return list(args[spec.first : last + 1 : max(spec.step, 1)])


@dataclass(frozen=True)
class Party:
    """Who sent a command, as the checks see it: a label for messages, the key prefix ``P:`` its
    keys must start with, and whether its commands are checked at all (the subject's are).

    A session of a sharded queue (profile sharded, SPEC 19) has ``shards`` > 0 and ``prefix``
    ``P`` without the colon: its keys are those of its shards ``{P#i}:`` and its doorbell
    ``{P#bell}``."""

    label: str
    prefix: bytes
    checked: bool
    shards: int = 0
    declared: bool = False
    """Profile declared-keys (SPEC 20): every key its scripts touch must be in the call's KEYS."""

    @property
    def prefixes(self) -> tuple[bytes, ...]:
        """The ``P:`` of each queue the party uses: its own, or each shard's."""
        if not self.shards:
            return (self.prefix,)
        return tuple(b"{" + self.prefix + b"#%d}:" % shard for shard in range(self.shards))

    @property
    def bell(self) -> bytes | None:
        return b"{" + self.prefix + b"#bell}" if self.shards else None

    @property
    def shown(self) -> str:
        """The namespace, for messages."""
        if not self.shards:
            return self.prefix.decode(errors="replace")
        return "{" + self.prefix.decode(errors="replace") + f"#0..{self.shards - 1}}}: and its doorbell"

    def owns(self, key: bytes) -> bool:
        return key == self.bell or any(key.startswith(prefix) for prefix in self.prefixes)


@dataclass(frozen=True)
class Violation:
    """One broken wire rule, at a step (0: while the sessions were being opened)."""

    step: int
    message: str


@dataclass
class _Pending:
    """EVALSHA calls of one party that hit NOSCRIPT and still await their retry, by SHA."""

    counts: Counter[str] = field(default_factory=Counter)
    steps: dict[str, int] = field(default_factory=dict)


def _seconds(arg: bytes) -> float:
    """A blocking command's timeout in seconds, or -1 when it is not a number."""
    try:
        return float(arg)
    except ValueError:
        return -1.0


def _sha(body: bytes) -> str:
    return hashlib.sha1(body).hexdigest()


class Checker:
    """Feeds on a case's trace, in order, and collects the violations of the subject's parties."""

    def __init__(
        self,
        parties: dict[str, Party],
        *,
        namespace: str,
        cached: set[str],
        names: dict[str, str],
        table: CommandTable,
        marker: bytes,
        one_script: dict[int, tuple[str, str, bytes | None]] | None = None,
        silent: dict[int, str] | None = None,
        finished: frozenset[str] = frozenset(),
    ) -> None:
        self.parties = parties
        self.finished = finished
        self.one_script = one_script or {}
        self.silent = silent or {}
        self._first_script: dict[int, tuple[str, bytes]] = {}  # a step's first script and ARGV[1]
        self.namespace = namespace.encode() + b":"
        self.cached = set(cached)
        self.names = dict(names)
        self.table = table
        self.marker = marker
        self.canonical = {sha: name for name, sha in data.canonical_scripts().items()}
        self.step = 0
        self.violations: list[Violation] = []
        self._caller: Party | None = None
        self._call_keys: set[bytes] = set()  # the KEYS of the script call whose commands follow
        self._window_bounds: dict[tuple[str, bytes, bytes], int] = {}  # per party, prefix, window kind
        self._ids: set[bytes] = set()  # every id a key or element of the trace held so far
        self._pending: dict[str, _Pending] = {}
        self._previous: dict[str, str] = {}  # each client's command before, as "script:<name>" or its name

    def _party(self, client: str) -> Party:
        name = self.names.get(client, "")
        if name in self.parties:
            return self.parties[name]
        if name in RUNNER_NAMES:
            return Party("the runner", b"", checked=False)
        if name in self.finished:  # a session of an earlier case whose process is still exiting
            return Party(f"connection {client} of an earlier case", b"", checked=False)
        who = f"connection {client} named {name!r}, no session of this case" if name else None
        return Party(who or f"connection {client}, which never set a name", self.namespace, checked=True)

    def _flag(self, party: Party, message: str) -> None:
        self.violations.append(Violation(self.step, f"{party.label} {message}"))

    def _outside(self, party: Party, keys: list[bytes], seen: Seen, inner: str = "") -> None:
        for key in keys:
            if not party.owns(key):
                where = f"its script ran {inner}, which touches" if inner else "touches"
                self._flag(
                    party,
                    f"sent {show(seen.args)}: {where} key {show((key,))}, outside its namespace "
                    f"{party.shown} (RWQ-KEYS-006)",
                )
                return

    def _learn(self, seen: Seen) -> None:
        """Remember the ids any connection or script put in a key or an element (RWQ-DECL-003's
        windows hold only ids that a list or set of the queue held)."""
        args = seen.args
        if len(args) < 2:
            return
        if seen.name in _PUSHES:
            self._ids.update(args[2:])
        elif seen.name in _FIELDS:
            self._ids.update(args[2::2])
        _, found, rest = args[1].partition(b":item:")
        if found:
            self._ids.add(rest)

    def feed(self, seen: Seen) -> None:
        """Check one traced command."""
        self._learn(seen)
        if seen.client == "lua":
            if self._caller is not None and seen.args:
                keys = self.table.keys(seen.args)
                self._outside(self._caller, keys, seen, inner=show(seen.args, 80))
                undeclared = [key for key in keys if key not in self._call_keys]
                if self._caller.declared and undeclared:
                    self._flag(
                        self._caller,
                        f"ran a script that ran {show(seen.args, 80)}, which touches key "
                        f"{show(tuple(undeclared[:1]))} that the call did not pass in KEYS (RWQ-DECL-001)",
                    )
                    self._caller = None  # one violation per call
            return
        self._caller = None
        if not seen.args:
            return
        name, sub = seen.name, seen.sub()
        if name == b"ECHO" and seen.args[-1].startswith(self.marker):
            tail = seen.args[-1][len(self.marker) :]
            self.step = int(tail) if tail.isdigit() else self.step
            return
        if (name, sub) == (b"CLIENT", b"SETNAME") and len(seen.args) > 2:
            self.names[seen.client] = seen.args[2].decode("utf-8", "replace")
        elif name == b"HELLO":
            upper = [arg.upper() for arg in seen.args]
            if b"SETNAME" in upper[:-1]:
                self.names[seen.client] = seen.args[upper.index(b"SETNAME") + 1].decode("utf-8", "replace")
        party = self._party(seen.client)
        if (
            party.checked
            and self.silent.get(self.step, "") == self.names.get(seen.client)
            and (name,) not in HANDSHAKE
            and (name, sub) not in HANDSHAKE
        ):
            self._flag(
                party,
                f"sent {show(seen.args)} in a step that must send nothing: an invalid call is refused "
                "with INVALID_ARGUMENT before any I/O (RWQ-ERR-002)",
            )
        previous, self._previous[seen.client] = self._previous.get(seen.client, ""), self._label(seen)
        if name in (b"EVAL", b"EVALSHA"):
            self._script_call(party, seen)
        elif (name, sub) == (b"SCRIPT", b"LOAD") and len(seen.args) > 2:
            self._script_load(party, seen)
        elif (name, sub) == (b"SCRIPT", b"FLUSH"):
            self.cached.clear()
            if party.checked:
                self._flag(party, f"sent {show(seen.args)}, which is not a queue operation (RWQ-SCRIPT-001)")
        elif party.checked:
            self._plain(party, seen)
            if name == b"WAIT" and previous.removeprefix("script:") not in ACKNOWLEDGED:
                self._flag(
                    party,
                    f"sent {show(seen.args)} after {previous or 'nothing'} on that connection: WAIT goes "
                    "on the connection of an add or complete script call, right after it (RWQ-ACK-001)",
                )

    def _label(self, seen: Seen) -> str:
        """How :attr:`_previous` remembers a command: a canonical script call by its script's name."""
        if seen.name == b"EVALSHA" and len(seen.args) > 1:
            return "script:" + self.canonical.get(seen.args[1].decode("ascii", "replace").lower(), "?")
        if seen.name == b"EVAL" and len(seen.args) > 1:
            return "script:" + self.canonical.get(_sha(seen.args[1]), "?")
        return seen.name.decode("ascii", "replace")

    def _script_call(self, party: Party, seen: Seen) -> None:
        name, args = seen.name, seen.args
        sha = args[1].decode("ascii", "replace").lower() if name == b"EVALSHA" else _sha(args[1])
        try:
            numkeys = int(args[2])
        except (IndexError, ValueError):
            numkeys = 0
        cached = sha in self.cached
        if name == b"EVAL":
            self.cached.add(sha)
        if not party.checked:
            self._caller = None
            return
        script = self.canonical.get(sha)
        if script is None:
            self._flag(party, f"ran a script that is not canonical (SHA1 {sha}) (RWQ-SCRIPT-001)")
            return
        expected = self.one_script.get(self.step)
        if expected and self.names.get(seen.client) == expected[0] and script != "shards":
            first_arg = args[3 + numkeys] if len(args) > 3 + numkeys else b""
            self._first_script.setdefault(self.step, (script, first_arg))
        self._outside(party, list(args[3 : 3 + numkeys]), seen)
        self._call_keys = set(args[3 : 3 + numkeys])
        if party.declared:
            self._declared_call(party, script, args, numkeys)
        pending = self._pending.setdefault(party.label, _Pending())
        if name == b"EVALSHA":
            if not cached:  # NOSCRIPT: the party must retry with EVAL or SCRIPT LOAD
                if not pending.counts[sha]:
                    pending.steps[sha] = self.step
                pending.counts[sha] += 1
                return
        elif pending.counts[sha]:
            pending.counts[sha] -= 1
        else:
            self._flag(
                party,
                f"sent EVAL of script {script!r} without an EVALSHA that hit NOSCRIPT first: scripts "
                "are invoked with EVALSHA, EVAL is only the retry (RWQ-SCRIPT-002)",
            )
        self._caller = party

    def _declared_call(self, party: Party, name: str, args: tuple[bytes, ...], numkeys: int) -> None:
        """RWQ-DECL-003: a declared call declares the ids it names and the last window of its kind,
        which holds no more than the call before of that kind (or this one) could reply with."""
        script = registry()[name]
        names = declared.declared_names(script)
        core = declared.core_keys(script)
        if not names or numkeys <= core:
            return
        command = RunScript(script, tuple(args[3 : 3 + numkeys]), tuple(args[3 + numkeys :]))
        kind = declared.window_kind(command)
        try:
            window = declared.window_bound(command)
            named = len(declared.named_ids(command))  # a port may declare a repeated id twice
        except (IndexError, ValueError):
            return  # arguments the script refuses: the case sees its error
        if kind is not None:
            key = (party.label, args[3], kind)
            window, self._window_bounds[key] = max(window, self._window_bounds.get(key, 0)), window
        bound = named + window
        triples = args[3 + core + len(names) : 3 + numkeys : 3]
        if len(triples) > bound:
            self._flag(
                party,
                f"called script {name!r} declaring {len(triples)} ids, more than the {bound} its ARGV "
                "and the last window of its kind can name (RWQ-DECL-003)",
            )
            return
        own = set(declared.named_ids(command))  # bytes, as the trace has them
        for item_key in triples:
            prefix = next((p for p in party.prefixes if item_key.startswith(p + b"item:")), None)
            found = item_key[len(prefix) + 5 :] if prefix is not None else None
            if found is not None and found not in own and found not in self._ids:
                self._flag(
                    party,
                    f"called script {name!r} declaring the keys of id {show((found,))}, which the call "
                    "does not name and no key or list of the queue has held, so no window can hold "
                    "it: a declared call declares the ids it names and those of its last window, no "
                    "others (RWQ-DECL-003)",
                )
                return

    def _script_load(self, party: Party, seen: Seen) -> None:
        sha = _sha(seen.args[2])
        self.cached.add(sha)
        if not party.checked:
            return
        if sha not in self.canonical:
            self._flag(party, f"loaded a script that is not canonical (SHA1 {sha}) (RWQ-SCRIPT-001)")
            return
        self._pending.setdefault(party.label, _Pending()).counts[sha] = 0

    def _plain(self, party: Party, seen: Seen) -> None:
        name, sub = seen.name, seen.sub()
        if name == b"KEYS":
            self._flag(party, f"sent {show(seen.args)}: items are found with SCAN, never KEYS (RWQ-DEEP-004)")
            return
        if name == b"CONFIG":
            self._flag(
                party,
                f"sent {show(seen.args)}: a client never sends CONFIG, which no ACL role has; the "
                "eviction check reads INFO memory (RWQ-SERVER-004)",
            )
            return
        if (name,) not in ALLOWED and (name, sub) not in ALLOWED:
            self._flag(
                party,
                f"sent {show(seen.args)}: besides script calls a client sends only the commands of "
                "RWQ-SCRIPT-006; queue keys are read and written inside the canonical scripts "
                "(RWQ-SCRIPT-001)",
            )
            return
        if name == b"HGETALL":
            if seen.args[1:] not in [(prefix + b"policy",) for prefix in party.prefixes]:
                self._flag(
                    party,
                    f"sent {show(seen.args)}: HGETALL is only for reading the queue's retry policy "
                    f"P:policy in {party.shown} (RWQ-SCRIPT-006)",
                )
        elif name == b"BLMOVE":
            self._blmove(party, seen)
        elif name == b"BLPOP":
            self._blpop(party, seen)
        elif name == b"SCAN":
            upper = [arg.upper() for arg in seen.args]
            pattern = seen.args[upper.index(b"MATCH") + 1] if b"MATCH" in upper[:-1] else b""
            if not any(pattern.startswith(prefix) for prefix in party.prefixes):
                self._flag(
                    party,
                    f"sent {show(seen.args)}: a SCAN must MATCH inside its namespace "
                    f"{party.shown} (RWQ-KEYS-006, SPEC 6.12)",
                )
        else:
            self._outside(party, self.table.keys(seen.args), seen)

    def _blmove(self, party: Party, seen: Seen) -> None:
        if party.shards:
            self._flag(
                party,
                f"sent {show(seen.args)}: a sharded queue's blocking lease waits on its doorbell with "
                "BLPOP, never on a shard (RWQ-SHARD-007)",
            )
            return
        shape = (b"BLMOVE", party.prefix + b"queue", party.prefix + b"processing", b"RIGHT", b"LEFT")
        got = (seen.name, *seen.args[1:3], *(arg.upper() for arg in seen.args[3:5]))
        wait_s = _seconds(seen.args[5]) if len(seen.args) == 6 else -1.0
        if got != shape or not 0 < wait_s <= MAX_BLMOVE_S:
            self._flag(
                party,
                f"sent {show(seen.args)}: a blocking lease waits with BLMOVE P:queue P:processing "
                f"RIGHT LEFT and at most {MAX_BLMOVE_S:g} s at a time (RWQ-LEASE-008, RWQ-LEASE-012)",
            )

    def _blpop(self, party: Party, seen: Seen) -> None:
        wait_s = _seconds(seen.args[2]) if len(seen.args) == 3 else -1.0
        if party.bell is None or seen.args[1:2] != (party.bell,) or not 0 < wait_s <= MAX_BLMOVE_S:
            self._flag(
                party,
                f"sent {show(seen.args)}: BLPOP is only a sharded queue's wait on its doorbell, "
                f"BLPOP {{P#bell}} t with 0 < t <= {MAX_BLMOVE_S:g} s (RWQ-SHARD-007, RWQ-SCRIPT-006)",
            )

    def finish(self) -> list[Violation]:
        """Every violation by step, including NOSCRIPT errors that were never retried."""
        for step, (client_name, script, arg) in self.one_script.items():
            first, first_arg = self._first_script.get(step, ("", b""))
            if first != script or (arg is not None and first_arg != arg):
                ran = f"its first script call was {first} {show((first_arg,))}" if first else "it ran none"
                call = script if arg is None else f"{script} {arg.decode()}"
                self.violations.append(
                    Violation(
                        step,
                        f"{self.parties[client_name].label} must perform this operation as one call "
                        f"of the {call!r} script, but {ran} (RWQ-NEXT-001, RWQ-RETRY-015, RWQ-SCRIPT-001)",
                    )
                )
        for label, pending in self._pending.items():
            for sha, count in pending.counts.items():
                if count:
                    self.violations.append(
                        Violation(
                            pending.steps[sha],
                            f"{label} got NOSCRIPT for script {self.canonical[sha]!r} and did not retry "
                            "with EVAL or SCRIPT LOAD (RWQ-SCRIPT-002)",
                        )
                    )
        return sorted(self.violations, key=lambda violation: violation.step)


class Trace:
    """A MONITOR connection that records one case, and the server's state when it started."""

    def __init__(self, env: RedisEnvironment, *, namespace: str, timeout_s: float) -> None:
        parts = urlsplit(env.data_url)
        self.client = env.client
        self.version = env.version
        self.namespace = namespace
        self.timeout_s = timeout_s
        self.marker = f"rwqc-wire:{namespace}:".encode()
        try:
            self._sock = socket.create_connection(
                (parts.hostname or "127.0.0.1", parts.port or 6379), timeout=timeout_s
            )
        except OSError as exc:
            raise WireError(f"cannot connect for MONITOR: {exc}") from exc
        self._file = self._sock.makefile("rb")
        try:
            self._start(env)
        except BaseException:
            self.close()
            raise

    def _start(self, env: RedisEnvironment) -> None:
        try:
            self._sock.sendall(b"CLIENT SETNAME rwqc-wire\r\nMONITOR\r\n")
            replies = (self._file.readline(), self._file.readline())
        except OSError as exc:
            raise WireError(f"MONITOR failed: {exc}") from exc
        if replies != (b"+OK\r\n", b"+OK\r\n"):
            raise WireError(f"MONITOR was refused: {replies!r}")
        shas = sorted(data.canonical_scripts().values())
        exists = self.client.execute_command("SCRIPT", "EXISTS", *shas)
        self.cached = {sha for sha, flag in zip(shas, exists, strict=True) if flag}
        self.names = {entry["addr"]: entry.get("name", "") for entry in env.clients() if "addr" in entry}

    def mark(self, step: int) -> None:
        """Mark the start of step ``step`` in the trace."""
        self.client.execute_command("ECHO", self.marker + str(step).encode())

    def finish(self) -> list[Seen]:
        """Every command traced so far (up to an end marker sent now), in order; closes the trace."""
        end = self.marker + b"end"
        self.client.execute_command("ECHO", end)
        deadline = time.monotonic() + self.timeout_s
        seen: list[Seen] = []
        runner = {addr.encode() for addr, name in self.names.items() if name in RUNNER_NAMES}
        by_runner = False  # the last command (not run by a script) was the runner's
        try:
            while True:
                self._sock.settimeout(max(deadline - time.monotonic(), 0.001))
                line = self._file.readline()
                if not line:
                    raise WireError("the MONITOR connection closed")
                head = _HEAD.match(line)
                if head is not None and head[1] == b"lua":
                    if by_runner and head[2].upper() not in LEARNED:
                        continue  # a command a script of the runner ran
                elif head is not None:
                    by_runner = head[1] in runner
                    if by_runner and head[2].upper() not in RUNNER_TRACED | LEARNED:
                        continue
                parsed = parse_line(line)
                if parsed is None:
                    continue
                if parsed.name in (b"CLIENT", b"HELLO") and b"SETNAME" in (
                    arg.upper() for arg in parsed.args
                ):
                    named = parsed.args[[arg.upper() for arg in parsed.args].index(b"SETNAME") + 1 :][:1]
                    address = parsed.client.encode()
                    if named and named[0].decode("utf-8", "replace") in RUNNER_NAMES:
                        runner.add(address)
                    else:
                        runner.discard(address)
                if parsed.name == b"ECHO" and parsed.args[-1] == end:
                    return seen
                seen.append(parsed)
        except OSError as exc:
            raise WireError(f"the MONITOR trace did not arrive within {self.timeout_s:.1f} s: {exc}") from exc
        finally:
            self.close()

    def check(
        self,
        parties: dict[str, Party],
        one_script: dict[int, tuple[str, str, bytes | None]] | None = None,
        silent: dict[int, str] | None = None,
        finished: frozenset[str] = frozenset(),
    ) -> list[Violation]:
        """Finish the trace and check it; ``parties`` maps client names to sessions, ``one_script``
        steps to the client name and the script of a one-script operation made in them, ``silent``
        steps to the client name of a session that must send nothing in them; ``finished`` names
        the sessions of earlier cases (their processes exit in the background)."""
        checker = Checker(
            parties,
            namespace=self.namespace,
            cached=self.cached,
            names=self.names,
            table=CommandTable(self.client, self.version),
            marker=self.marker,
            one_script=one_script,
            silent=silent,
            finished=finished,
        )
        for command in self.finish():
            checker.feed(command)
        return checker.finish()

    def close(self) -> None:
        for closable in (self._file, self._sock):
            try:
                closable.close()
            except OSError:
                continue
