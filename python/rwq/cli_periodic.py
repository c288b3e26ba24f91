"""``rwq schedule ...`` and ``rwq scheduler``: periodic items (profile periodic, SPEC §23).

Who may run what (SPEC §13.1): ``schedule add`` and ``remove`` the admin; ``pause`` and
``resume`` the operator; ``list`` and ``next`` the observer; ``rwq scheduler`` the scheduler.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import json
import logging
import os
import signal
import sys
import zoneinfo
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from .cli_queue import (
    _table,
    cluster_option,
    emit,
    json_option,
    open_client,
    shown,
    url_option,
)
from .client import WorkQueue
from .errors import RwqError
from .periodic import Scheduler
from .protocol.periodic import Schedule, StoredSchedule

prefix_option = click.option("--prefix", "-q", required=True, help="The queue's key prefix.")


@contextlib.contextmanager
def _queue(url: str, prefix: str, cluster: bool) -> Iterator[WorkQueue]:
    with open_client(url, cluster) as client:
        yield WorkQueue(client, prefix)


def _when(ms: int | None, tz: str = "UTC") -> str:
    """An instant as ISO-8601 in ``tz`` (UTC when the zone is unknown here)."""
    if ms is None:
        return ""
    instant = dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc)
    with contextlib.suppress(zoneinfo.ZoneInfoNotFoundError, ValueError):
        instant = instant.astimezone(zoneinfo.ZoneInfo(tz))
    return instant.isoformat(timespec="milliseconds")


@click.group()
def schedule() -> None:
    """Schedules of periodic items (profile periodic): each slot adds one item <name>@<slot_ms>."""


@schedule.command("add")
@click.argument("name")
@prefix_option
@url_option
@cluster_option
@click.option("--every-ms", type=int, help="Every N ms, on the grid k*N + offset from the epoch.")
@click.option("--offset-ms", type=int, default=0, show_default=True, help="The grid's offset (--every-ms).")
@click.option("--cron", "cron", help="A 5-field cron expression (SPEC 23.2) instead of --every-ms.")
@click.option("--tz", default="UTC", show_default=True, help="The cron expression's IANA time zone.")
@click.option("--missed", type=click.Choice(["skip", "once"]), default="skip", show_default=True)
@click.option(
    "--grace-ms", type=int, default=60_000, show_default=True, help="How late a slot may still fire."
)
@click.option("--data", help="The payload of every item, as UTF-8 text.")
@click.option(
    "--data-file", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="The payload's file."
)
@json_option
def add(
    *,
    name: str,
    prefix: str,
    url: str,
    cluster: bool,
    every_ms: int | None,
    offset_ms: int,
    cron: str | None,
    tz: str,
    missed: str,
    grace_ms: int,
    data: str | None,
    data_file: Path | None,
    as_json: bool,
) -> None:
    """Create schedule NAME, or replace it (its watermark stays: no slot fires twice). Admin."""
    if (data is None) == (data_file is None):
        raise click.UsageError("give exactly one of --data or --data-file")
    # os.fsencode: the bytes the shell gave, also when they are not UTF-8 (argv's surrogate escapes)
    payload = os.fsencode(data) if data is not None else data_file.read_bytes()  # type: ignore[union-attr]
    try:
        definition = (
            Schedule.every(every_ms, offset_ms=offset_ms, missed=missed, grace_ms=grace_ms)
            if every_ms is not None and cron is None
            else Schedule.cron_in(cron, tz, missed=missed, grace_ms=grace_ms)
            if cron is not None and every_ms is None
            else None
        )
    except RwqError as exc:
        raise click.ClickException(f"{exc.code}: {exc}") from exc
    if definition is None:
        raise click.UsageError("give exactly one of --every-ms or --cron")
    with _queue(url, prefix, cluster) as queue:
        created = queue.put_schedule(name, definition, payload)
    table = _table(f"schedule {name} on {prefix}", "name", "done")
    table.add_row(shown(name), "created" if created else "replaced")
    emit(as_json, {"command": "schedule add", "prefix": prefix, "name": name, "created": created}, table)


def _listed(stored: StoredSchedule, now_ms: int) -> dict[str, Any]:
    try:
        parsed: Schedule | None = stored.schedule()
    except RwqError:
        parsed = None
    mark = stored.last_fired_ms if stored.last_fired_ms is not None else -1
    entry: dict[str, Any] = {
        "name": stored.name,
        "schedule": json.loads(stored.definition) if parsed is not None else None,
        "data_base64": base64.b64encode(stored.data).decode(),
        "last_fired_ms": stored.last_fired_ms,
        "paused_ms": stored.paused_ms,
        "next_ms": None if parsed is None else parsed.next_slot(max(mark, now_ms)),
    }
    with contextlib.suppress(UnicodeDecodeError):
        entry["data"] = stored.data.decode()
    return entry


@schedule.command("list")
@prefix_option
@url_option
@cluster_option
@json_option
def list_schedules(*, prefix: str, url: str, cluster: bool, as_json: bool) -> None:
    """Every schedule: its kind, next slot, last slot fired, and whether it is paused. Observer."""
    with _queue(url, prefix, cluster) as queue:
        listing = queue.schedules()
    entries = [_listed(stored, listing.now_ms) for stored in listing.schedules]
    table = _table(f"schedules of {prefix}", "name", "kind", "next slot", "last fired", "paused")
    for entry in entries:
        definition = entry["schedule"] or {}
        tz = definition.get("tz", "UTC")
        kind = (
            f"every {definition['every_ms']} ms"
            if "every_ms" in definition
            else f"cron {definition['cron']} ({tz})"
            if "cron" in definition
            else "not understood (skipped)"
        )
        table.add_row(
            shown(entry["name"]),
            shown(kind),
            _when(entry["next_ms"], tz),
            _when(entry["last_fired_ms"], tz),
            _when(entry["paused_ms"], tz),
        )
    document = {"command": "schedule list", "prefix": prefix, "now_ms": listing.now_ms, "schedules": entries}
    emit(as_json, document, table)


@schedule.command("next")
@click.argument("name")
@prefix_option
@url_option
@cluster_option
@click.option("--count", type=click.IntRange(1, 100), default=10, show_default=True)
@json_option
def next_slots(*, name: str, prefix: str, url: str, cluster: bool, count: int, as_json: bool) -> None:
    """The next COUNT slots of NAME after the server's now: to check a cron line and its DST days.
    Observer (it reads the definition, then walks locally)."""
    with _queue(url, prefix, cluster) as queue:
        listing = queue.schedules()
    found = [stored for stored in listing.schedules if stored.name == name]
    if not found:
        raise click.ClickException(f"no schedule {name!r} on {prefix}")
    try:
        parsed = found[0].schedule()
    except RwqError as exc:
        raise click.ClickException(f"{exc.code}: {exc}") from exc
    slots, after = [], listing.now_ms
    for _ in range(count):
        after = parsed.next_slot(after)
        slots.append(after)
    table = _table(f"next slots of {name}", "slot (ms)", "UTC", parsed.tz)
    for slot in slots:
        table.add_row(str(slot), _when(slot), _when(slot, parsed.tz))
    emit(as_json, {"command": "schedule next", "prefix": prefix, "name": name, "slots_ms": slots}, table)


def _change(mode: str, who: str) -> click.Command:
    @click.argument("name")
    @prefix_option
    @url_option
    @cluster_option
    @json_option
    def command(*, name: str, prefix: str, url: str, cluster: bool, as_json: bool) -> None:
        with _queue(url, prefix, cluster) as queue:
            done = getattr(queue, f"{mode}_schedule")(name)
        table = _table(f"schedule {mode} {name} on {prefix}", "name", "changed")
        table.add_row(shown(name), "yes" if done else "no (nothing to do)")
        emit(as_json, {"command": f"schedule {mode}", "prefix": prefix, "name": name, "done": done}, table)

    command.__doc__ = {
        "pause": "Pause NAME: no slot fires until it is resumed.",
        "resume": "Resume NAME: the slots of the pause never fire.",
        "remove": "Remove NAME; the items it added stay.",
    }[mode] + f" {who}."
    return click.command(mode)(command)


for _mode, _who in (("pause", "Operator"), ("resume", "Operator"), ("remove", "Admin")):
    schedule.add_command(_change(_mode, _who))


@click.command("scheduler")
@prefix_option
@url_option
@cluster_option
@click.option("--log-level", type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"]), default="INFO")
def scheduler_command(*, prefix: str, url: str, cluster: bool, log_level: str) -> None:
    """Fire the queue's schedules until SIGTERM or SIGINT (exit 0). Any number may run at once:
    each slot still adds one item. It runs as the user `rwq acl scheduler` prints, and shows in
    `rwq workers` as kind scheduler."""
    logging.basicConfig(level=log_level, format="%(asctime)s %(levelname)s %(message)s", force=True)
    try:
        with _queue(url, prefix, cluster) as queue:
            scheduler = Scheduler(queue)
            for signum in (signal.SIGTERM, signal.SIGINT):
                signal.signal(signum, lambda *_: scheduler.stop())
            scheduler.run()
    except RwqError as exc:
        logging.getLogger("rwq.scheduler").error("scheduler stopped: %s: %s", type(exc).__name__, exc)  # noqa: TRY400
        sys.exit(1)
