"""The JSON result (validated by schemas/bench-result.schema.json) and the tables printed at the end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
from rich.console import Console
from rich.table import Table

from bench import golang, typescript
from bench.core import Measurement
from bench.external import Section
from bench.history import TOLERANCE, Regression

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "schemas" / "bench-result.schema.json"
FORMAT = "rwq-bench/1"


def document(
    measurements: list[Measurement],
    targets: list[dict[str, Any]],
    config: dict[str, Any],
    environment: dict[str, Any],
    peers: dict[str, str],
) -> dict[str, Any]:
    """The whole result as one JSON-ready document."""
    return {
        "format": FORMAT,
        "config": config,
        "environment": environment,
        "peers": peers,
        "measurements": [m.to_json() for m in measurements],
        "targets": targets,
    }


def validate(doc: dict[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``doc`` matches the schema."""
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)


def _figure(value: float, unit: str) -> str:
    if unit == "items/s":
        return f"{value / 1000:,.1f}k" if value >= 1000 else f"{value:,.0f}"
    if unit == "bytes/item":
        return f"{value:,.0f} B"
    if unit == "ms":
        return f"{value:.3f}" if value < 1 else f"{value:.2f}"
    return f"{value:.2f}"


def print_tables(console: Console, doc: dict[str, Any], path: Path) -> None:
    """Figures per peer (with the ratio to raw redis-py), the Go and TypeScript clients' sections, then
    the targets."""
    python = [m for m in doc["measurements"] if "baseline" not in m]
    go = [m for m in doc["measurements"] if m.get("baseline") == golang.RAW]
    ts = [m for m in doc["measurements"] if m.get("baseline") == typescript.RAW]
    shown = {peer for m in python for peer in (*m["results"], *m["skipped"])}
    peers = [peer for peer in doc["peers"] if peer in shown]
    if python:  # none with --only go or --only ts
        console.print(_table("rwq bench: figure (ratio to raw redis-py, same run)", python, peers))
    if go:
        _other_language(console, golang.SECTION, go, {m["id"]: m for m in python})
    if ts:
        _print_ts(console, ts, {m["id"]: m for m in python})

    targets = Table(title="issue 6 targets (rwq as shipped; prototypes alongside)", show_lines=False)
    for column in ("target", "needed", "rwq", "met", "ceiling", "rwq-proto", "rwq-lean"):
        targets.add_column(column, justify="left" if column == "target" else "right")
    for t in doc["targets"]:
        alt = t["alternatives"]
        targets.add_row(
            t["text"],
            f"{t['comparison']} {t['threshold']:g}",
            "n/a" if t["value"] is None else f"{t['value']:.2f}",
            _verdict(t["met"]),
            "[dim]-[/dim]" if t.get("ceiling") is None else f"{t['ceiling']:.2f}",
            *(
                f"{alt[name]['value']:.2f} {_verdict(alt[name]['met'])}" if name in alt else "[dim]-[/dim]"
                for name in ("rwq-proto", "rwq-lean")
            ),
        )
    console.print(targets)
    console.print(
        "ceiling: the best ratio rwq's measured server time allows at its round trips per item, "
        "were its client as cheap as a bare redis-py command; for the 4-process drain, the ratio "
        "the measured CPU per item (clients and Redis) predicts on saturated cores (bench/targets.py)"
    )
    console.print(f"JSON result: [bold]{path}[/bold]")


def _table(
    title: str,
    measurements: list[dict[str, Any]],
    peers: list[str],
    extra: dict[str, list[str]] | None = None,
) -> Table:
    """One row per measurement, a column per peer: its figure and its ratio to the row's baseline;
    ``extra`` adds columns of ready cells."""
    table = Table(title=title, show_lines=True)
    table.add_column("measurement")
    table.add_column("unit")
    for column in (*peers, *(extra or {})):
        table.add_column(column, justify="right")
    for index, m in enumerate(measurements):
        cells = []
        for peer in peers:
            result = m["results"].get(peer)
            if result is None:
                cells.append("[dim]-[/dim]")
                continue
            cell = _figure(result["value"], m["unit"])
            ratio = m["ratio_to_raw"].get(peer)
            if ratio is not None:
                cell += f"\n({ratio:.2f}x)"
            cells.append(cell)
        table.add_row(m["title"], m["unit"], *cells, *(column[index] for column in (extra or {}).values()))
    return table


def _other_language(
    console: Console,
    section: Section,
    rows: list[dict[str, Any]],
    python: dict[str, dict[str, Any]],
    extra: dict[str, list[str]] | None = None,
) -> None:
    """A client of another language against its raw client of the same run, next to the Python
    client's ratio to raw redis-py in the same measurement (and ``extra`` columns)."""
    name = section.name
    if not any(m["results"] for m in rows):
        reasons = sorted({reason for m in rows for reason in m["skipped"].values()})
        console.print(f"[yellow]{name}: skipped: {'; '.join(reasons)}[/yellow]")
        return
    peers = [peer for peer in section.labels if any(peer in m["results"] for m in rows)]
    python_ratios = []
    for m in rows:
        ratio = python.get(m["id"].removeprefix(section.prefix + "_"), {}).get("ratio_to_raw", {}).get("rwq")
        python_ratios.append("[dim]-[/dim]" if ratio is None else f"{ratio:.2f}x")
    title = f"{name}: figure (ratio to raw {section.raw}, same run)"
    console.print(_table(title, rows, peers, {**(extra or {}), "Python rwq / raw redis-py": python_ratios}))


def _print_ts(console: Console, rows: list[dict[str, Any]], python: dict[str, dict[str, Any]]) -> None:
    """The TypeScript client, with its ratio to BullMQ for Node of the same run."""
    to_bullmq = []
    for m in rows:
        client, bullmq = m["results"].get(typescript.CLIENT), m["results"].get(typescript.BULLMQ)
        if client is None or bullmq is None or bullmq["value"] == 0:
            to_bullmq.append("[dim]-[/dim]")
        else:
            to_bullmq.append(f"{client['value'] / bullmq['value']:.2f}x")
    _other_language(console, typescript.SECTION, rows, python, {"rwq-ts / bullmq-node": to_bullmq})


def _verdict(met: bool | None) -> str:
    if met is None:
        return "[yellow]n/a[/yellow]"
    return "[green]met[/green]" if met else "[red]missed[/red]"


def print_history(console: Console, stored: Path, earlier: Path | None, worse: list[Regression]) -> None:
    """The comparison with the last stored run of the same machine kind (bench/history.py)."""
    console.print(f"history: this run's ratios stored in [bold]{stored}[/bold]")
    if earlier is None:
        console.print("history: the first stored run of this machine kind, nothing to compare with")
        return
    if not worse:
        console.print(f"history: no ratio got worse by more than {TOLERANCE:.0%} since {earlier.name}")
        return
    table = Table(title=f"[red]ratios worse by more than {TOLERANCE:.0%} since {earlier.name}[/red]")
    for column in ("measurement", "peer", "before", "now", "change"):
        table.add_column(column, justify="left" if column in ("measurement", "peer") else "right")
    for r in worse:
        table.add_row(r.title, r.peer, f"{r.before:.2f}x", f"{r.now:.2f}x", f"[red]{r.change:+.0%}[/red]")
    console.print(table)
