"""Operator commands of the ``rwq`` CLI: counts, cleaning and the dead-letter set of one queue.

``--json`` prints machine-readable output, described by the ``cli-output`` schema shipped with
rwq (``rwq/schemas/cli-output.schema.json``). Tables never interpret what they show: ids,
reasons and payloads are data, printed as text with control characters escaped (no rich markup,
no terminal escapes), and with no styling at all when the output is not a terminal.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import json
import re
import time
import unicodedata
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

import click
import redis
from redis.cluster import RedisCluster
from redis.exceptions import AskError, MovedError
from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from ._shell import FAILURES
from .client import WorkQueue
from .errors import InvalidArgument, NoPermission, RwqError, WrongType
from .protocol import acl
from .protocol import validation as v
from .protocol.operations import CleanReport, DeadItem
from .protocol.stats import COUNTERS, WINDOWS
from .sharded import ShardedWorkQueue

DEFAULT_URL = "redis://127.0.0.1:6379/0"
COUNTS = ("queued", "processing", "delayed", "dead")
"""The counts' names, the same in tables and in JSON (the fields of :class:`~rwq.Counts`):
queued = ready to lease, processing = leased (in flight), delayed = not due yet, dead =
dead-lettered."""
url_option = click.option(
    "--url",
    envvar=["RWQ_URL", "REDIS_URL"],
    default=DEFAULT_URL,
    show_default=True,
    help="The Redis to use; else $RWQ_URL, else $REDIS_URL.",
)
cluster_option = click.option(
    "--cluster", is_flag=True, help="Connect to a Redis Cluster (prefixes need a hash tag)."
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON (rwq's cli-output schema).")
shards_option = click.option(
    "--shards",
    type=click.IntRange(0, 1024),
    default=0,
    help="Profile sharded: the queue's shard count (SPEC §19); 0, the default: not sharded.",
)
DECLARED_KEYS = "rwq.declared_keys"


def _remember(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    ctx.meta[DECLARED_KEYS] = value
    return value


declared_keys_option = click.option(
    "--declared-keys",
    is_flag=True,
    expose_value=False,
    callback=_remember,
    help="Profile declared-keys: pass every key a script touches in KEYS (SPEC §20).",
)
queue_options: list[Callable[[Any], Any]] = [
    url_option,
    click.option("--prefix", required=True, help="The queue's key prefix."),
    cluster_option,
    shards_option,
    declared_keys_option,
    json_option,
]


def with_queue_options(command: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(queue_options):
        command = option(command)
    return command


@contextmanager
def open_queue(
    url: str, prefix: str, cluster: bool, shards: int = 0
) -> Iterator[WorkQueue | ShardedWorkQueue]:
    """A queue (sharded when ``shards``; with profile declared-keys when the command got
    ``--declared-keys``) on a client of its own; every failure becomes a one-line CLI error
    (exit 1)."""
    ctx = click.get_current_context(silent=True)
    declared_keys = bool(ctx and ctx.meta.get(DECLARED_KEYS))
    with open_client(url, cluster) as client:
        yield (
            ShardedWorkQueue(client, prefix, shards=shards, declared_keys=declared_keys)
            if shards
            else WorkQueue(client, prefix, declared_keys=declared_keys)
        )


def _hint(exc: Exception) -> str:
    """What to do about a redirection error: the URL names a cluster node, or not."""
    text = str(exc)
    if isinstance(exc.__cause__, MovedError | AskError) or isinstance(exc, MovedError | AskError):
        return " (this Redis is a node of a Redis Cluster: add --cluster)"
    if "cluster support disabled" in text.lower():
        return " (this Redis is not a cluster: drop --cluster)"
    return ""


_QUERY_PASSWORD = re.compile(r"[?&][^=&#]*password=([^&#]*)", re.IGNORECASE)  # ssl_password too


def redacted(text: str, url: str) -> str:
    """``text`` (the URL itself, or a message about it) with every password of ``url`` replaced by
    ``***``: the userinfo's (up to the last ``@`` before the path, as redis-py reads it) and any
    ``password=`` query parameter's, as written and decoded, in every scheme (``redis://``,
    ``rediss://``, ``unix://``). Passwords never reach a message."""
    rest = url.partition("://")[2]
    netloc = re.split(r"[/?#]", rest, maxsplit=1)[0]
    whole = rest.rpartition("@")[0].partition(":")[2]  # the userinfo's password up to the last "@"
    # A password holding "#", "?" or "/" unencoded is cut short where a URL parser reads it: as
    # the netloc's password, or, with no "@" left in the netloc, as its port. Heads of 3
    # characters or more are masked too (shorter ones would mask ordinary text).
    head = netloc.rpartition("@")[0].partition(":")[2] if "@" in netloc else netloc.rpartition(":")[2]
    found = {whole, *_QUERY_PASSWORD.findall(url)}
    if whole and len(head) >= 3:
        found.add(head)
    secrets = found | {urllib.parse.unquote(secret) for secret in found}
    for secret in sorted((secret for secret in secrets if secret), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def unknown_url_option(exc: TypeError) -> bool:
    """Whether ``exc`` is redis-py refusing, at its first connection, a URL query option it does
    not know (``?Password=``): the connection's constructor got an unexpected keyword."""
    return "unexpected keyword argument" in str(exc)


def url_option_error(exc: TypeError) -> str:
    """The plain words for :func:`unknown_url_option`'s error."""
    name = str(exc).rpartition("argument ")[2]
    return f"the URL has an option the Redis client does not know: {name} (option names are lower case)"


def shown(value: str) -> Text:
    """Data as a table cell: never read as markup, control characters escaped (no terminal codes)."""
    return Text("".join(_escaped(char) for char in value))


def _escaped(char: str) -> str:
    if unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp"):
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
    return char


def emit(as_json: bool, document: dict[str, Any], table: Table) -> None:
    if as_json:
        click.echo(json.dumps(document, sort_keys=True))
    else:
        # Styles only on a terminal; never markup or emoji codes read from data.
        Console(highlight=False, emoji=False, markup=False).print(table)


def _table(title: str, *columns: str) -> Table:
    table = Table(title=shown(title))
    for column in columns:
        table.add_column(column)
    return table


def server_now_ms(queue: WorkQueue | ShardedWorkQueue) -> int:
    """The server's clock (SPEC §5: times come from Redis), in epoch milliseconds."""
    plain = queue.queues[0] if isinstance(queue, ShardedWorkQueue) else queue
    seconds, micros = plain._redis.time()
    return int(seconds) * 1000 + int(micros) // 1000


def when(at_ms: int, now_ms: int) -> str:
    """An epoch-ms time as ISO-8601 UTC, and relative to the server's now ("... (4 s ago)")."""
    iso = dt.datetime.fromtimestamp(at_ms / 1000, dt.timezone.utc).isoformat(timespec="milliseconds")
    return f"{iso.replace('+00:00', 'Z')} ({_ago(now_ms - at_ms)})"


def _ago(ms: int) -> str:
    future, ms = ms < 0, abs(ms)
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms >= size:
            amount = f"{ms // size} {unit}"
            return f"in {amount}" if future else f"{amount} ago"
    return "now"


def payload_text(data: bytes, mode: str) -> str:
    """A payload as text: UTF-8 as is (``auto``/``text``), else base64 (``auto``/``base64``)."""
    if mode != "base64":
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            if mode == "text":
                return data.decode("utf-8", "backslashreplace")
    return "base64:" + base64.b64encode(data).decode()


@click.command()
@with_queue_options
@click.option(
    "--enable",
    "switch",
    flag_value="enable",
    help="Turn the queue's statistics on (profile stats; the admin role's job): every event counts "
    "from now on, at about 8 % more Redis CPU per drained item.",
)
@click.option(
    "--disable", "switch", flag_value="disable", help="Turn the queue's statistics off and delete its counts."
)
def stats(*, url: str, prefix: str, cluster: bool, shards: int, as_json: bool, switch: str | None) -> None:
    """A queue's counts, read at one instant: queued (ready to lease), processing (leased, in
    flight), delayed (not due yet) and dead (dead-lettered); and, while its statistics are on
    (profile stats, SPEC §22), its events per counter: this minute, the last 1, 5, 15 and 60
    minutes, and per second over the last 5. The observer role's job (rwq acl observer)."""
    with open_queue(url, prefix, cluster, shards) as queue:
        if switch is not None:
            changed = queue.enable_stats() if switch == "enable" else queue.disable_stats()
            state = "on" if switch == "enable" else "off"
            table = _table(f"statistics of {prefix}", "stats", "changed")
            table.add_row(state, "yes" if changed else f"no (already {state})")
            emit(as_json, {"command": f"stats {switch}", "prefix": prefix, "changed": changed}, table)
            return
        counts = queue.counts()
        events = queue.stats()
    table = _table(f"queue {prefix}", *COUNTS)
    table.add_row(*(str(n) for n in (counts.queued, counts.processing, counts.delayed, counts.dead)))
    document: dict[str, Any] = {"command": "stats", "prefix": prefix, **asdict(counts), "stats": None}
    if not events.enabled:
        emit(as_json, document, table)
        return
    document["stats"] = {
        "since_ms": events.since_ms,
        "now_ms": events.now_ms,
        "current": events.current.as_dict(),
        "windows": {str(w): window.as_dict() for w, window in events.windows.items()},
    }
    if as_json:
        emit(as_json, document, table)
        return
    on = _table(
        f"events of {prefix}, on since {_ago(events.now_ms - (events.since_ms or 0))}",
        "counter",
        "this minute",
        *(f"{w} min" for w in WINDOWS),
        "per second (5 min)",
    )
    for name in COUNTERS:
        on.add_row(
            name,
            str(getattr(events.current, name)),
            *(str(getattr(events.windows[w], name)) for w in WINDOWS),
            f"{events.rate(name, 5):.2f}",
        )
    Console(highlight=False, emoji=False, markup=False).print(table, on)


@click.command()
@with_queue_options
@click.option(
    "--count", type=click.IntRange(1, 1000), default=100, show_default=True, help="At most this many workers."
)
def workers(*, url: str, prefix: str, cluster: bool, shards: int, as_json: bool, count: int) -> None:
    """The live workers of a queue (profile workers, SPEC §21): those whose last heartbeat's
    deadline is still ahead, earliest deadline first. The observer role's job (rwq acl observer)."""
    with open_queue(url, prefix, cluster, shards) as queue:
        live_workers = queue.workers(count=count)
        now_ms = server_now_ms(queue)
    table = _table(
        f"live workers of {prefix}",
        "id",
        "kind",
        "host",
        "pid",
        "language",
        "started",
        "last seen",
        "in hand",
        "completed",
        "failed",
        "items",
    )
    for worker in live_workers:
        record = worker.record
        ttl = record.get("ttl_ms")
        started = record.get("started_ms")
        seen = worker.deadline_ms - ttl if isinstance(ttl, int) else None
        table.add_row(
            shown(worker.id),
            *(shown(str(record.get(name, ""))) for name in ("kind", "host", "pid", "language")),
            _ago(now_ms - started) if isinstance(started, int) else "",
            _ago(now_ms - seen) if seen is not None else "",
            *(shown(str(record.get(name, ""))) for name in ("in_hand", "completed", "failed")),
            shown(", ".join(str(item) for item in record.get("items", []) or [])),
        )
    document = {
        "command": "workers",
        "prefix": prefix,
        "now_ms": now_ms,
        "workers": [{"id": w.id, "deadline_ms": w.deadline_ms, "record": w.record} for w in live_workers],
    }
    emit(as_json, document, table)


@click.command()
@with_queue_options
@click.option("--deep", is_flag=True, help="Also find orphans with SCAN (a deep clean).")
def clean(*, url: str, prefix: str, cluster: bool, shards: int, as_json: bool, deep: bool) -> None:
    """Requeue abandoned items (expired leases); with --deep, orphans too."""
    with open_queue(url, prefix, cluster, shards) as queue:
        # The deep clean first: its SCAN is what a role may lack, and a refusal must come before
        # the light clean writes anything (RWQ-SEC-006).
        deep_report = queue.deep_clean() if deep else None
        reports = {"light": queue.light_clean()}
        if deep_report is not None:
            reports["deep"] = deep_report
    table = _table(
        f"clean {prefix}", "kind", "requeued", "dropped (ids with no item)", "dead-lettered", "promoted"
    )
    for kind, report in reports.items():
        table.add_row(
            kind, str(len(report.requeued)), str(report.dropped), str(len(report.dead)), str(report.promoted)
        )
    document = {"command": "clean", "prefix": prefix, **{kind: _clean(r) for kind, r in reports.items()}}
    emit(as_json, document, table)


def _clean(report: CleanReport) -> dict[str, Any]:
    return {
        "requeued": list(report.requeued),
        "dropped": report.dropped,
        "dead": list(report.dead),
        "promoted": report.promoted,
    }


@click.command(
    "acl",
    epilog="Roles: " + "; ".join(f"{role.name}: {role.job}" for role in acl.ROLES.values()) + ".",
)
@click.argument("roles", nargs=-1, required=True, type=click.Choice(list(acl.ROLES)))
@click.option("--prefix", required=True, help="The queue's key prefix.")
@click.option("--user", help="The ACL user's name (default: PREFIX-ROLE).")
@click.option("--redis6", is_flag=True, help="Write ~ for read-only key patterns too (Redis 6.2 has no %R~).")
@click.option(
    "--declared-keys",
    is_flag=True,
    help="For profile declared-keys: ~ for every key (Redis 7 checks declared keys as read-write).",
)
@click.option(
    "--shards",
    type=int,
    default=0,
    help="A sharded queue's shard count (SPEC §19): every shard, and its doorbell.",
)
def acl_command(
    *, roles: tuple[str, ...], prefix: str, user: str | None, redis6: bool, declared_keys: bool, shards: int
) -> None:
    """Print the ACL SETUSER line giving ROLES their jobs on one queue and no other (SPEC §13.1);
    several roles make one user (``worker scheduler`` for ``rwq worker --scheduler``).

    The line sets no password: add one (>secret, or #<sha256>) when you run it.
    """
    try:
        click.echo(acl.setuser(roles, prefix, user, read_only=not (redis6 or declared_keys), shards=shards))
    except RwqError as exc:
        raise click.ClickException(f"{exc.code}: {exc}") from exc


@click.command("shards")
@url_option
@click.option("--prefix", required=True, help="The sharded queue's name.")
@cluster_option
@click.option("--shards", type=click.IntRange(1, 1024), required=True, help="Its shard count.")
@json_option
def shards_command(*, url: str, prefix: str, cluster: bool, shards: int, as_json: bool) -> None:
    """Record the shard count of a sharded queue in its shard 0, or check it against the one
    recorded there. The admin's job (RWQ-SHARD-009): the other ACL roles only read the count, so
    run this as the admin before their first use of the queue."""
    with open_client(url, cluster) as client:
        ShardedWorkQueue(client, prefix, shards=shards).record_shard_count()
    table = _table(f"sharded queue {prefix}", "shards", "recorded in")
    table.add_row(str(shards), shown(f"{{{prefix}#0}}:shards"))
    emit(as_json, {"command": "shards", "prefix": prefix, "shards": shards}, table)


@click.group()
def dead() -> None:
    """The dead-letter set of a queue (profile retry)."""


def _dead(item: DeadItem) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": item.id,
        "dead_at_ms": item.dead_at_ms,
        "reason": item.reason,
        "attempts": item.attempts,
        "detail": item.detail,
    }
    if item.data is not None:
        record["data_base64"] = base64.b64encode(item.data).decode()
        with contextlib.suppress(UnicodeDecodeError):  # not text: data_base64 only
            record["data_text"] = item.data.decode("utf-8")
    return record


@dead.command("list")
@with_queue_options
@click.option("--offset", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--count", type=click.IntRange(1, 1000), default=100, show_default=True)
def dead_list(
    *, url: str, prefix: str, cluster: bool, shards: int, as_json: bool, offset: int, count: int
) -> None:
    """Dead items, newest first."""
    with open_queue(url, prefix, cluster, shards) as queue:
        items = queue.dead_items(offset=offset, count=count)
        now_ms = server_now_ms(queue)
    table = _table(f"dead items of {prefix}", "id", "dead since", "attempts", "reason")
    for item in items:
        table.add_row(shown(item.id), when(item.dead_at_ms, now_ms), str(item.attempts), shown(item.reason))
    emit(as_json, {"command": "dead list", "prefix": prefix, "items": [_dead(i) for i in items]}, table)


@dead.command("show")
@with_queue_options
@click.option(
    "--payload",
    type=click.Choice(["auto", "text", "base64"]),
    default="auto",
    show_default=True,
    help="auto: text when the payload is UTF-8, else base64.",
)
@click.argument("item_id")
def dead_show(
    *, url: str, prefix: str, cluster: bool, shards: int, as_json: bool, payload: str, item_id: str
) -> None:
    """One dead item, with its payload."""
    with open_queue(url, prefix, cluster, shards) as queue:
        item = queue.dead_item(item_id)
        now_ms = server_now_ms(queue)
    if item is None:
        raise click.ClickException(f"{item_id!r} is not in the dead-letter set of {prefix}")
    table = _table(f"dead item {item_id}", "field", "value")
    table.add_row("id", shown(item.id))
    table.add_row("dead since", when(item.dead_at_ms, now_ms))
    table.add_row("attempts", str(item.attempts))
    table.add_row("reason", shown(item.reason))
    if item.detail:  # a traceback, say: line by line, each escaped like any data
        table.add_row("detail", Text("\n").join(shown(line) for line in item.detail.split("\n")))
    table.add_row("payload", shown(payload_text(item.data or b"", payload)))
    emit(as_json, {"command": "dead show", "prefix": prefix, "item": _dead(item)}, table)


EXIT_NOTHING_DONE = 4
"""Exit code of ``rwq dead requeue`` and ``rwq dead purge`` when they did nothing: no id given
was dead (or live again), or ``--all`` found no dead item."""

NOTHING_DONE = (
    f"Exit codes: 0 done (for at least one item), 1 error, 3 usage error, {EXIT_NOTHING_DONE} nothing done."
)
all_option = click.option("--all", "every", is_flag=True, help="Every dead item of the queue, in batches.")
batch_option = click.option(
    "--batch",
    type=click.IntRange(1, 1000),
    default=100,
    show_default=True,
    help="With --all: items per call (each batch is one listing and one requeue or purge per shard).",
)


@dead.command("requeue", epilog=NOTHING_DONE)
@with_queue_options
@all_option
@batch_option
@click.argument("item_ids", nargs=-1)
def dead_requeue(
    *,
    url: str,
    prefix: str,
    cluster: bool,
    shards: int,
    as_json: bool,
    every: bool,
    batch: int,
    item_ids: tuple[str, ...],
) -> None:
    """Make dead items ready again, their attempts reset: the ITEM_IDS given, or --all."""
    _dead_action(
        url=url,
        prefix=prefix,
        cluster=cluster,
        shards=shards,
        as_json=as_json,
        ids=item_ids,
        every=every,
        batch=batch,
        action="requeue",
    )


@dead.command("purge", epilog=NOTHING_DONE)
@with_queue_options
@all_option
@batch_option
@click.option("--yes", is_flag=True, help="Confirm --all: every dead item is deleted for good.")
@click.argument("item_ids", nargs=-1)
def dead_purge(
    *,
    url: str,
    prefix: str,
    cluster: bool,
    shards: int,
    as_json: bool,
    every: bool,
    batch: int,
    yes: bool,
    item_ids: tuple[str, ...],
) -> None:
    """Delete dead items for good: the ITEM_IDS given, or --all (with --yes)."""
    if every and not yes:
        raise click.UsageError(
            "purge --all deletes every dead item of the queue for good: add --yes to confirm"
        )
    _dead_action(
        url=url,
        prefix=prefix,
        cluster=cluster,
        shards=shards,
        as_json=as_json,
        ids=item_ids,
        every=every,
        batch=batch,
        action="purge",
    )


def _dead_action(
    *,
    url: str,
    prefix: str,
    cluster: bool,
    shards: int,
    as_json: bool,
    ids: tuple[str, ...],
    every: bool,
    batch: int,
    action: str,
) -> None:
    if every == bool(ids):
        raise click.UsageError("give the ids of dead items, or --all (not both)")
    with open_queue(url, prefix, cluster, shards) as queue:
        act = queue.requeue_dead if action == "requeue" else queue.purge_dead
        results = _every_dead(queue, act, batch) if every else list(zip(ids, act(list(ids)), strict=True))
    table = _table(f"dead {action} in {prefix}", "id", "done")
    for item_id, flag in results:
        table.add_row(shown(item_id), "yes" if flag else "no (not dead, or live again)")
    document: dict[str, Any] = {
        "command": f"dead {action}",
        "prefix": prefix,
        "results": [{"id": item_id, "done": flag} for item_id, flag in results],
    }
    if every:
        document["all"] = True
    emit(as_json, document, table)
    if not any(flag for _, flag in results):
        what = "no dead item" if every and not results else "no item given was dead"
        click.echo(f"nothing to {action} in {prefix}: {what}", err=True)
        raise SystemExit(EXIT_NOTHING_DONE)


def _every_dead(
    queue: WorkQueue | ShardedWorkQueue, act: Callable[[list[str]], list[bool]], batch: int
) -> list[tuple[str, bool]]:
    """Act on every dead item, ``batch`` at a time, newest first. Items it could not act on stay
    in the set, so the listing moves past them: the run ends after at most one pass over the set
    (items that die meanwhile may be included)."""
    results: list[tuple[str, bool]] = []
    offset = 0
    while items := queue.dead_items(offset=offset, count=batch):
        ids = [item.id for item in items]
        done = act(ids)
        results += zip(ids, done, strict=True)
        offset += done.count(False)
    return results


TYPES: dict[str, str] = {
    "queue": "list",
    "processing": "list",
    "in_flight": "zset",
    "item": "string",
    "lease": "string",
    "leased_by_session": "string",
    "policy": "hash",
    "attempts": "hash",
    "dead": "zset",
    "dead:data": "hash",
    "dead:info": "hash",
    "delayed": "zset",
    "delayed:data": "hash",
    "shards": "string",
}
"""The key families that hold a queue's items or settings (SPEC §3, §15, §16, §18, §19), with
their Redis types: every family but a clean's own expiring bookkeeping (``cleaned``,
``deep_clean:<run>``)."""
PER_ID = frozenset({"item", "lease", "leased_by_session", "deep_clean"})


def queue_of(key: str, kind: str) -> str | None:
    """The queue prefix ``P`` whose key ``key`` (of Redis type ``kind``) is, or None.

    A family name (``item``...) is never a segment of ``P`` but its first (RWQ-KEYS-008), so the
    first one after the first segment starts the tail; else the tail is the fixed name the key
    ends with (one or two segments, SPEC §3's isolation argument)."""
    segments = key.split(":")
    for j in range(1, len(segments) - 1):
        if segments[j] in PER_ID:
            return ":".join(segments[:j]) if TYPES.get(segments[j]) == kind else None
    for size in (2, 1):
        tail = ":".join(segments[-size:])
        if len(segments) > size and TYPES.get(tail) == kind:
            return ":".join(segments[:-size])
    return None


def find_queues(client: Any, *, cluster: bool) -> list[str]:
    """The prefixes of the queues on a server (every master of a cluster): every queue that holds
    a key of one of the families of :data:`TYPES`, of the Redis type SPEC §3 gives it, so that a
    queue whose items are all in flight, delayed or dead is found too.

    It needs SCAN, which only the operator ACL role has (SPEC §13.1): one pass per Redis type.
    """
    nodes = client.get_primaries() if cluster else [None]
    found: set[str] = set()
    try:
        for node in nodes:
            for kind in sorted(set(TYPES.values())):
                options: dict[str, Any] = {"match": "*:*", "_type": kind, "count": 1000}
                keys = (
                    client.scan_iter(**options, target_nodes=node) if cluster else client.scan_iter(**options)
                )
                for key in keys:
                    with contextlib.suppress(UnicodeDecodeError):
                        prefix = queue_of(key.decode("utf-8"), kind)
                        if prefix:
                            found.add(prefix)
    except redis.exceptions.NoPermissionError as exc:
        raise click.ClickException(
            f"finding the queues needs SCAN, which only the operator ACL role has (SPEC §13.1): {exc}"
        ) from exc
    return sorted(found)


@dataclass(frozen=True)
class Found:
    """The queues of a server as an operator sees them: each queue's counts (``rows``), how many
    queues this user may not read (``skipped``: its ACL role is for other queues, SPEC §13.1),
    and how many prefixes hold keys that look like a queue's but are not an RWQ/1 queue
    (``not_queues``: another application's keys of other types, or a name rwq refuses)."""

    rows: list[dict[str, Any]]
    skipped: int
    not_queues: int


def queue_counts(client: Any, prefixes: list[str]) -> Found:
    """Each queue's counts, as ``rwq stats`` reads them; see :class:`Found`. A shard of a sharded
    queue, ``{P#i}``, is counted on its own (RWQ-KEYS-010 lets only the sharded queue open it, so
    it is read through :class:`~rwq.protocol.validation.ShardPrefix`). One odd prefix never hides
    the others."""
    rows, skipped, not_queues = [], 0, 0
    for prefix in prefixes:
        try:
            counts = WorkQueue(client, v.ShardPrefix(prefix) if v.shard_form(prefix) else prefix).counts()
        except (InvalidArgument, WrongType):
            not_queues += 1  # a reserved segment, no hash tag on a cluster, or keys of other types
            continue
        except NoPermission:
            skipped += 1
            continue
        rows.append({"prefix": prefix, **asdict(counts)})
    return Found(rows, skipped, not_queues)


def say_skipped(found: Found) -> None:
    """Tell, on stderr, what the tables leave out: queues this user may not read, and prefixes
    that are not RWQ/1 queues."""
    if found.skipped:
        noun = "queue" if found.skipped == 1 else "queues"
        click.echo(
            f"skipped {found.skipped} {noun} this user may not read (its ACL role is for other queues, "
            "SPEC §13.1)",
            err=True,
        )
    if found.not_queues:
        click.echo(
            f"left out {found.not_queues} prefixes whose keys are not an RWQ/1 queue's (keys of other "
            "types, or a name rwq refuses, SPEC §3)",
            err=True,
        )


@click.command()
@url_option
@cluster_option
@json_option
def queues(*, url: str, cluster: bool, as_json: bool) -> None:
    """The queues on a server, with their counts: every queue that holds anything (ready, in
    flight, delayed or dead items, a policy...). Run it as the operator ACL role (it needs SCAN);
    the queues this user may not read are skipped and counted ("skipped")."""
    with open_client(url, cluster) as client:
        found = queue_counts(client, find_queues(client, cluster=cluster))
    table = _table("queues", "prefix", *COUNTS)
    for row in found.rows:
        table.add_row(shown(row["prefix"]), *(str(row[n]) for n in COUNTS))
    document = {
        "command": "queues",
        "queues": found.rows,
        "skipped": found.skipped,
        "not_queues": found.not_queues,
    }
    emit(as_json, document, table)
    if not as_json:
        say_skipped(found)


@click.command()
@url_option
@cluster_option
@click.option("--prefix", "prefixes", multiple=True, help="Watch these queues (default: every queue found).")
@click.option("--interval-ms", type=click.IntRange(100), default=1000, show_default=True)
@click.option(
    "--iterations", type=click.IntRange(1), help="Stop after this many refreshes (default: until ^C)."
)
def top(
    *, url: str, cluster: bool, prefixes: tuple[str, ...], interval_ms: int, iterations: int | None
) -> None:
    """A live view of the queues' counts and how fast they change (per second). Run it as the
    operator ACL role; the queues this user may not read are skipped, and counted in the title."""
    console = Console(highlight=False, emoji=False, markup=False)
    with open_client(url, cluster) as client:
        previous: dict[str, dict[str, Any]] = {}
        last = time.monotonic()

        def frame() -> Table:
            nonlocal previous, last
            names = list(prefixes) or find_queues(client, cluster=cluster)
            found, now = queue_counts(client, names), time.monotonic()
            rows = found.rows
            title = (
                f"rwq top (skipped {found.skipped} this user may not read)" if found.skipped else "rwq top"
            )
            table = _table(title, "prefix", *COUNTS, "queued/s", "dead/s")
            for row in rows:
                before, elapsed = previous.get(row["prefix"]), max(now - last, 1e-9)
                rates = [
                    f"{(row[n] - before[n]) / elapsed:+.1f}" if before else "" for n in ("queued", "dead")
                ]
                counts = [str(row[n]) for n in COUNTS]
                table.add_row(shown(row["prefix"]), *counts, *rates)
            previous, last = {row["prefix"]: row for row in rows}, now
            return table

        count = 0
        with Live(frame(), console=console, auto_refresh=False) as live:
            while iterations is None or (count := count + 1) < iterations:
                time.sleep(interval_ms / 1000)
                live.update(frame(), refresh=True)


@contextmanager
def open_client(url: str, cluster: bool) -> Iterator[Any]:
    """A client of its own, every failure a one-line CLI error, as :func:`open_queue`."""
    try:
        client: Any = RedisCluster.from_url(url) if cluster else redis.Redis.from_url(url)
    except (ValueError, *FAILURES) as exc:
        raise click.ClickException(redacted(f"cannot use --url {url}: {exc}", url)) from exc
    try:
        yield client
    except TypeError as exc:
        if not unknown_url_option(exc):
            raise
        raise click.ClickException(redacted(f"cannot use --url {url}: {url_option_error(exc)}", url)) from exc
    except RwqError as exc:
        raise click.ClickException(redacted(f"{exc.code}: {exc}{_hint(exc)}", url)) from exc
    except FAILURES as exc:
        message = f"REDIS_ERROR: {type(exc).__name__}: {exc}{_hint(exc)}"
        raise click.ClickException(redacted(message, url)) from exc
    finally:
        client.close()
