"""Least-privilege Redis ACL roles for one queue (SPEC §13): the one table SPEC, CLI and tests use.

Redis checks every command a script runs against the caller's ACL, so a role needs the commands
and keys of the scripts its operations run, plus the few commands its client sends itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InvalidArgument
from . import validation as v
from .scripts import registry
from .sharding import ShardLayout

_ITEM = ("item:*", "lease:*", "leased_by_session:*")
_RETRY = ("policy", "attempts", "dead", "dead:data", "dead:info")
_DELAY = ("delayed", "delayed:data")
_LISTS = ("queue", "processing")
_FLAT = ("in_flight",)
_WORKERS = ("workers", "workers:seen")
_STATS = ("stats", "stats:series")
_SCHEDULES = ("schedules", "schedules:data", "schedules:fired", "schedules:paused")

SCRIPT_KEYS: dict[str, frozenset[str]] = {
    "add": frozenset({"queue", *_ITEM, *_DELAY, "dead", *_STATS}),
    "claim": frozenset({*_LISTS, *_FLAT, *_ITEM, *_RETRY, *_STATS}),
    "complete": frozenset({*_LISTS, *_FLAT, *_ITEM, "attempts", *_DELAY, *_STATS}),
    "complete_and_lease": frozenset({*_LISTS, *_FLAT, *_ITEM, *_RETRY, *_DELAY, *_STATS}),
    "counts": frozenset({*_LISTS, *_FLAT, "delayed", "dead"}),
    "dead": frozenset({"queue", *_ITEM, *_RETRY, "delayed"}),
    "deep_clean": frozenset({*_LISTS, *_FLAT, *_ITEM, "deep_clean:*", *_STATS}),
    "fail": frozenset({*_LISTS, *_FLAT, *_ITEM, *_RETRY, *_DELAY, *_STATS}),
    "lease": frozenset({*_LISTS, *_FLAT, *_ITEM, *_RETRY, *_DELAY, *_STATS}),
    "light_clean": frozenset({*_LISTS, *_FLAT, *_ITEM, "cleaned", *_RETRY, *_DELAY, *_STATS}),
    "release": frozenset({*_LISTS, *_FLAT, *_ITEM, *_DELAY, "policy", "attempts"}),
    "renew": frozenset({"queue", *_FLAT, *_ITEM}),
    "set_policy": frozenset({"queue", "policy"}),
    "shards": frozenset({"queue", "shards"}),
    "ring": frozenset(),  # its one key is the doorbell {P#bell}, outside every shard's P: (SPEC §19)
    "heartbeat": frozenset({"queue", *_WORKERS}),
    "stats": frozenset({"queue", *_STATS}),
    "schedule": frozenset({"queue", *_SCHEDULES}),
    "fire": frozenset({"queue", *_ITEM, "dead", "delayed", *_SCHEDULES, *_STATS}),
}
"""Per canonical script: the key families ``<P>:<family>`` it may read or write (SPEC §3, §15, §16,
§21, §22). The scripts that count profile stats read the flag ``stats`` and write the series."""

FAMILIES = (
    *_LISTS,
    *_FLAT,
    *_ITEM,
    "deep_clean:*",
    "cleaned",
    *_RETRY,
    *_DELAY,
    "shards",
    *_WORKERS,
    *_STATS,
    *_SCHEDULES,
)
"""Every key family of the layout, in the order of SPEC §3: the order the rules are printed in."""


_CALL = re.compile(r"""redis\.p?call\(\s*['"](\w+)['"]""")


def script_commands(name: str) -> frozenset[str]:
    """The commands a canonical script runs, read from its source (lower case)."""
    source = registry()[name].source.decode()
    code = "\n".join(line.split("--", 1)[0] for line in source.splitlines())
    return frozenset(command.lower() for command in _CALL.findall(code))


READS = frozenset(
    {"exists", "get", "hexists", "hget", "hgetall", "hmget", "hscan", "llen", "lrange", "time", "type"}
    | {"zcard", "zrange", "zrangebyscore", "zrevrange", "zscore"}
)
"""The commands that only read: a role that runs a script in its read modes only (``Role.reads``)
gets these of the script's commands, and none of its writes."""

CONNECTION = ("evalsha", "eval", "info")
"""What every role's client sends: scripts (EVAL after NOSCRIPT) and INFO (the server check, §11)."""


@dataclass(frozen=True, slots=True)
class Role:
    """One job's share of a queue: the scripts it runs and the commands its client sends itself.

    ``also`` says what else the role can do: an ACL tells queues apart, not scripts, so a role can
    run every script whose commands and keys it has. ``read_only`` families get ``%R~`` patterns.
    ``reads``: scripts the role runs in their read modes only (the observer's ``heartbeat list``):
    their keys, and only those of their commands that read (:data:`READS`).
    """

    name: str
    job: str
    also: str
    scripts: tuple[str, ...]
    commands: tuple[str, ...]
    key_families: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()

    def families(self) -> list[str]:
        """The key families the role's scripts and its own commands name, in SPEC order."""
        named = set(self.key_families).union(*(SCRIPT_KEYS[s] for s in (*self.scripts, *self.reads)))
        return [family for family in FAMILIES if family in named]

    def all_commands(self) -> list[str]:
        """Every command the role needs: its client's, then its scripts', each group sorted."""
        own = [*CONNECTION, *self.commands]
        run = set().union(*(script_commands(s) for s in self.scripts))
        run |= set().union(*(script_commands(s) & READS for s in self.reads))
        return own + sorted(run - set(own))


ROLES: dict[str, Role] = {
    role.name: role
    for role in (
        Role(
            "producer",
            "add, add_many (delayed too; WAIT of profile ack)",
            "nothing",
            ("add",),
            ("wait",),
            read_only=("dead", "stats"),
        ),
        Role(
            "worker",
            "lease (blocking too), lease_many, renew, complete, complete_and_lease, release, fail, "
            "light_clean (every worker's default cleaner, paced), its heartbeat (profile workers)",
            "add, the dead-letter set, read the policy, list the live workers",
            (
                "lease",
                "claim",
                "renew",
                "complete",
                "complete_and_lease",
                "release",
                "fail",
                "light_clean",
                "dead",
                "heartbeat",
            ),
            ("blmove", "wait"),
            read_only=("policy", "stats"),
        ),
        Role(
            "operator",
            "counts, light_clean, deep_clean, the dead-letter set (list, get, requeue, purge), "
            "read the policy, list the live workers, read the stats, list, pause and resume the schedules",
            "add; renew, complete, release and fail (never lease); fire the schedules' slots",
            ("counts", "light_clean", "deep_clean", "dead", "heartbeat", "schedule"),
            ("scan", "hgetall"),
            ("policy",),
            read_only=("policy", *_WORKERS, "stats", "schedules", "schedules:data"),
            reads=("stats",),
        ),
        Role(
            "admin",
            "load the scripts, set and read the retry policy, record a sharded queue's shard count, "
            "turn the stats on and off (profile stats), put, remove, list, pause and resume the schedules",
            "nothing",
            ("set_policy", "stats", "schedule"),
            ("script|load", "hgetall"),
        ),
        Role(
            "observer",
            "counts, list the live workers and the schedules, read the stats "
            "(dashboards, exporters, rwq workers, rwq stats)",
            "nothing",
            ("counts",),
            (),
            read_only=("in_flight", "delayed", "dead", *_WORKERS, *_STATS, *_SCHEDULES),
            reads=("heartbeat", "stats", "schedule"),
        ),
        Role(
            "scheduler",
            "list the schedules and fire their slots (profile periodic), its heartbeat (profile workers)",
            "add (not delayed), list the live workers",
            ("fire", "heartbeat"),
            (),
            read_only=("dead", "delayed", "schedules", "schedules:data", "schedules:paused", "stats"),
            reads=("schedule",),
        ),
    )
}
"""The roles of SPEC §13.1, by name."""


READERS = frozenset({"observer"})
"""The roles that never write: of the shard count's script they get the reads only."""

RINGS = frozenset({"producer", "worker", "operator"})
"""The roles whose operations ring a sharded queue's doorbell (adds, releases and requeues of dead
items, RWQ-SHARD-006)."""


def shard_globs(count: int) -> list[str]:
    """Glob patterns that match exactly the decimal numbers 0..count-1 (no leading zeros), with
    digit classes: ``[0-9]``, ``[1-9][0-9]``, ``10[0-1][0-9]``, ... A sharded role's patterns
    name its shards through these rather than one by one, because Redis checks every key a
    script touches against each pattern in turn (1,024 shards one by one made a call 170 times
    dearer), and never as ``*``, which would also match queue ``P#1``'s shards ``{P#1#i}``."""
    globs: list[str] = []
    for digits in range(1, len(str(count - 1)) + 1):
        low = 0 if digits == 1 else 10 ** (digits - 1)
        high = min(count - 1, 10**digits - 1)
        if low <= high:
            globs += _digit_globs(str(low), str(high))
    return globs


def _digit_globs(low: str, high: str) -> list[str]:
    """Globs for the numbers low..high, two decimal strings of the same length."""
    if len(low) == 1:
        return [low if low == high else f"[{low}-{high}]"]
    if low[0] == high[0]:
        return [low[0] + tail for tail in _digit_globs(low[1:], high[1:])]
    rest = len(low) - 1
    globs: list[str] = []
    first, last = int(low[0]), int(high[0])
    if low[1:] != "0" * rest:
        globs += [low[0] + tail for tail in _digit_globs(low[1:], "9" * rest)]
        first += 1
    if high[1:] != "9" * rest:
        last -= 1
    if first <= last:
        globs.append((str(first) if first == last else f"[{first}-{last}]") + "[0-9]" * rest)
    if high[1:] != "9" * rest:
        globs += [high[0] + tail for tail in _digit_globs("0" * rest, high[1:])]
    return globs


def merged(names: tuple[str, ...]) -> Role:
    """One role doing the jobs of several (``rwq acl worker scheduler``: a worker started with
    ``--scheduler``): every script and command of each, and a family read-only only where every
    role that names it only reads it."""
    for name in names:
        if name not in ROLES:
            raise InvalidArgument(f"role must be one of {', '.join(ROLES)}, not {name!r}")
    if len(names) == 1:
        return ROLES[names[0]]
    roles = [ROLES[name] for name in names]
    named = [set(role.families()) for role in roles]
    read_only = tuple(
        family
        for family in FAMILIES
        if any(family in n for n in named)
        and all(family in role.read_only for role, n in zip(roles, named, strict=True) if family in n)
    )
    return Role(
        "+".join(names),
        "; ".join(role.job for role in roles),
        "; ".join(role.also for role in roles),
        tuple(dict.fromkeys(script for role in roles for script in role.scripts)),
        tuple(dict.fromkeys(command for role in roles for command in role.commands)),
        tuple(dict.fromkeys(family for role in roles for family in role.key_families)),
        read_only,
        tuple(dict.fromkeys(script for role in roles for script in role.reads)),
    )


def rules(role: str | tuple[str, ...], prefix: str, *, read_only: bool = True, shards: int = 0) -> list[str]:
    """The ``ACL SETUSER`` rules that give ``role`` (or several roles, merged) exactly its job on
    queue ``prefix``.

    A family the role only reads gets a read-only pattern (``%R~``, Redis 7); ``read_only=False``
    writes ``~`` instead, for Redis 6.2. With ``shards`` (profile sharded, SPEC §19) the patterns
    name the shards ``{prefix#i}`` through digit classes (:func:`shard_globs`), with the shard
    count key of shard 0 that every client checks (read-only but for the admin, who records it),
    and the doorbell for the roles that ring it or wait on it.
    """
    names = (role,) if isinstance(role, str) else role
    spec = merged(names)
    v.queue_prefix(prefix, cluster=False)
    commands = spec.all_commands()
    if not shards:
        return ["reset", "on", *_patterns(spec, prefix, read_only), *(f"+{c}" for c in commands)]
    layout = ShardLayout(prefix, shards)  # checks the count and the prefix's sharded rules
    patterns = [
        pattern
        for glob in shard_globs(shards)
        for pattern in _patterns(spec, f"{{{prefix}#{glob}}}", read_only)
    ]
    # Only the admin records the shard count; every other role only checks it (RWQ-SHARD-009).
    writes = "admin" in names or not read_only
    patterns.append(f"{'' if writes else '%R'}~{layout.prefixes[0]}:shards")
    extra = set(script_commands("shards"))
    if all(name in READERS for name in names):
        extra &= READS
    if any(name in RINGS for name in names):
        patterns.append(f"~{layout.bell.decode()}")
        extra |= script_commands("ring")
    if "worker" in names:  # a blocking lease waits on the doorbell, never on a shard (RWQ-SHARD-007)
        extra.add("blpop")
        commands = [command for command in commands if command != "blmove"]
    commands += sorted(extra - set(commands))
    return ["reset", "on", *patterns, *(f"+{command}" for command in commands)]


def _patterns(spec: Role, prefix: str, read_only: bool) -> list[str]:
    return [
        f"{'%R' if read_only and family in spec.read_only else ''}~{prefix}:{family}"
        for family in spec.families()
    ]


def setuser(
    role: str | tuple[str, ...],
    prefix: str,
    user: str | None = None,
    *,
    read_only: bool = True,
    shards: int = 0,
) -> str:
    """The ``ACL SETUSER`` line (redis-cli quoting); the password is the deployer's to add."""
    name = role if isinstance(role, str) else "-".join(role)
    words = [user or f"{prefix}-{name}", *rules(role, prefix, read_only=read_only, shards=shards)]
    return "ACL SETUSER " + " ".join(_quote(word) for word in words)


def _quote(word: str) -> str:
    if word and not any(c.isspace() or c in "\"'" for c in word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
