"""Operator commands of the ``rwq`` CLI: counts, cleaning and the dead-letter set of one queue.

``--json`` prints machine-readable output, described by ``schemas/cli-output.schema.json``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any

import click
import redis
from redis.cluster import RedisCluster
from rich.console import Console
from rich.table import Table

from .client import WorkQueue
from .errors import RwqError
from .protocol import acl
from .protocol.operations import CleanReport, DeadItem

queue_options: list[Callable[[Any], Any]] = [
    click.option("--url", default="redis://127.0.0.1:6379/0", show_default=True, help="The Redis to use."),
    click.option("--prefix", required=True, help="The queue's key prefix."),
    click.option("--cluster", is_flag=True, help="Connect to a Redis Cluster (the prefix needs a hash tag)."),
    click.option("--json", "as_json", is_flag=True, help="Print JSON (schemas/cli-output.schema.json)."),
]


def with_queue_options(command: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(queue_options):
        command = option(command)
    return command


@contextmanager
def open_queue(url: str, prefix: str, cluster: bool) -> Iterator[WorkQueue]:
    """A queue on a client of its own; RWQ errors become clean CLI errors (exit 1)."""
    client: Any = RedisCluster.from_url(url) if cluster else redis.Redis.from_url(url)
    try:
        yield WorkQueue(client, prefix)
    except RwqError as exc:
        raise click.ClickException(f"{exc.code}: {exc}") from exc
    finally:
        client.close()


def emit(as_json: bool, document: dict[str, Any], table: Table) -> None:
    if as_json:
        click.echo(json.dumps(document, sort_keys=True))
    else:
        Console().print(table)


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title)
    for column in columns:
        table.add_column(column)
    return table


@click.command()
@with_queue_options
def stats(*, url: str, prefix: str, cluster: bool, as_json: bool) -> None:
    """Ready, in-flight, delayed and dead counts of a queue, read at one instant."""
    with open_queue(url, prefix, cluster) as queue:
        counts = queue.counts()
    table = _table(f"queue {prefix}", "ready", "in flight", "delayed", "dead")
    table.add_row(*(str(n) for n in (counts.queued, counts.processing, counts.delayed, counts.dead)))
    emit(as_json, {"command": "stats", "prefix": prefix, **asdict(counts)}, table)


@click.command()
@with_queue_options
@click.option("--deep", is_flag=True, help="Also find orphans with SCAN (a deep clean).")
def clean(*, url: str, prefix: str, cluster: bool, as_json: bool, deep: bool) -> None:
    """Requeue abandoned items (expired leases); with --deep, orphans too."""
    with open_queue(url, prefix, cluster) as queue:
        reports = {"light": queue.light_clean()}
        if deep:
            reports["deep"] = queue.deep_clean()
    table = _table(f"clean {prefix}", "kind", "requeued", "ghosts dropped", "dead-lettered", "promoted")
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
@click.argument("role", type=click.Choice(list(acl.ROLES)))
@click.option("--prefix", required=True, help="The queue's key prefix.")
@click.option("--user", help="The ACL user's name (default: PREFIX-ROLE).")
@click.option("--redis6", is_flag=True, help="Write ~ for read-only key patterns too (Redis 6.2 has no %R~).")
def acl_command(*, role: str, prefix: str, user: str | None, redis6: bool) -> None:
    """Print the ACL SETUSER line giving ROLE its job on one queue and no other (SPEC §13.1).

    The line sets no password: add one (>secret, or #<sha256>) when you run it.
    """
    try:
        click.echo(acl.setuser(role, prefix, user, read_only=not redis6))
    except RwqError as exc:
        raise click.ClickException(f"{exc.code}: {exc}") from exc


@click.group()
def dead() -> None:
    """The dead-letter set of a queue (profile retry)."""


def _dead(item: DeadItem) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": item.id,
        "dead_at_ms": item.dead_at_ms,
        "reason": item.reason,
        "attempts": item.attempts,
    }
    if item.data is not None:
        record["data_base64"] = base64.b64encode(item.data).decode()
    return record


@dead.command("list")
@with_queue_options
@click.option("--offset", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--count", type=click.IntRange(1, 1000), default=100, show_default=True)
def dead_list(*, url: str, prefix: str, cluster: bool, as_json: bool, offset: int, count: int) -> None:
    """Dead items, newest first."""
    with open_queue(url, prefix, cluster) as queue:
        items = queue.dead_items(offset=offset, count=count)
    table = _table(f"dead items of {prefix}", "id", "dead at (ms)", "attempts", "reason")
    for item in items:
        table.add_row(item.id, str(item.dead_at_ms), str(item.attempts), item.reason)
    emit(as_json, {"command": "dead list", "prefix": prefix, "items": [_dead(i) for i in items]}, table)


@dead.command("show")
@with_queue_options
@click.argument("item_id")
def dead_show(*, url: str, prefix: str, cluster: bool, as_json: bool, item_id: str) -> None:
    """One dead item, with its payload."""
    with open_queue(url, prefix, cluster) as queue:
        item = queue.dead_item(item_id)
    if item is None:
        raise click.ClickException(f"{item_id!r} is not in the dead-letter set of {prefix}")
    table = _table(f"dead item {item_id}", "field", "value")
    for field, value in _dead(item).items():
        table.add_row(field, str(value))
    emit(as_json, {"command": "dead show", "prefix": prefix, "item": _dead(item)}, table)


@dead.command("requeue")
@with_queue_options
@click.argument("item_ids", nargs=-1, required=True)
def dead_requeue(*, url: str, prefix: str, cluster: bool, as_json: bool, item_ids: tuple[str, ...]) -> None:
    """Make dead items ready again, their attempts reset."""
    _dead_action(url=url, prefix=prefix, cluster=cluster, as_json=as_json, ids=item_ids, action="requeue")


@dead.command("purge")
@with_queue_options
@click.argument("item_ids", nargs=-1, required=True)
def dead_purge(*, url: str, prefix: str, cluster: bool, as_json: bool, item_ids: tuple[str, ...]) -> None:
    """Delete dead items for good."""
    _dead_action(url=url, prefix=prefix, cluster=cluster, as_json=as_json, ids=item_ids, action="purge")


def _dead_action(
    *, url: str, prefix: str, cluster: bool, as_json: bool, ids: tuple[str, ...], action: str
) -> None:
    with open_queue(url, prefix, cluster) as queue:
        done = queue.requeue_dead(list(ids)) if action == "requeue" else queue.purge_dead(list(ids))
    table = _table(f"dead {action} in {prefix}", "id", "done")
    for item_id, flag in zip(ids, done, strict=True):
        table.add_row(item_id, "yes" if flag else "no (not dead, or live again)")
    results = [{"id": item_id, "done": flag} for item_id, flag in zip(ids, done, strict=True)]
    emit(as_json, {"command": f"dead {action}", "prefix": prefix, "results": results}, table)
