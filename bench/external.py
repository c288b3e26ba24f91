"""Clients of other languages in the bench (issue 23 §4): each is measured by a program of its own
against its language's raw client on the bench's Redis, after the Python measurements, and its
JSON figures become rows whose ratios are taken against that raw client (``Measurement.baseline``).
``bench/golang.py`` and ``bench/typescript.py`` build their program and describe their section;
running it, reading its JSON and skipping with a reason are written once, here.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.core import Better, Config, Measurement, PeerResult

Log = Callable[[str], None]
TIMEOUT_S = 1800


def rows(consumers: str) -> dict[str, tuple[str, str, Better]]:
    """The measurement ids every section's program reports, with their title, unit and direction;
    ``consumers`` says what runs the concurrent drain (goroutines, async loops)."""
    return {
        "enqueue_one": ("enqueue, 1 item per call", "items/s", "higher"),
        "enqueue_batch": ("enqueue, {batch} items per call", "items/s", "higher"),
        "drain_one": ("drain, 1 consumer, lease + complete", "items/s", "higher"),
        "drain_processes": (f"drain, {{processes}} concurrent consumers ({consumers})", "items/s", "higher"),
        "wake_median": ("blocked consumer wake-up, median", "ms", "lower"),
    }


@dataclass(frozen=True)
class Section:
    """One language's rows: their id prefix (``go``), title prefix (``Go``), the section's name
    in the report, the raw client's peer name, the measurement ids with their title, unit and
    direction, and what measures them."""

    prefix: str
    title: str
    name: str
    raw: str
    labels: dict[str, str]
    rows: dict[str, tuple[str, str, Better]]
    program: str

    def skipped(self, config: Config, reason: str) -> list[Measurement]:
        """Every row, each peer skipped with ``reason``."""
        out = []
        for key, (template, unit, better) in self.rows.items():
            title = template.format(batch=config.batch, processes=config.processes)
            row = Measurement(
                f"{self.prefix}_{key}", f"{self.title}: {title}", unit, better, baseline=self.raw
            )
            row.skipped = dict.fromkeys(self.labels, reason)
            out.append(row)
        return out

    def rows_of(self, doc: dict[str, Any], environment: str) -> list[Measurement]:
        """The program's JSON as report rows."""
        out = []
        for m in doc["measurements"]:
            row = Measurement(
                f"{self.prefix}_{m['id']}",
                f"{self.title}: {m['title']}",
                m["unit"],
                m["better"],
                baseline=self.raw,
            )
            for peer, r in m["results"].items():
                row.results[peer] = PeerResult(
                    r["value"], r["samples"], r["n"], r["how"], r.get("detail", {})
                )
            row.notes.extend([*m["notes"], f"measured by {self.program} ({environment})"])
            out.append(row)
        return out

    def run(
        self,
        command: list[str],
        cwd: Path,
        config: Config,
        log: Log,
        environment: Callable[[dict[str, Any]], str],
    ) -> list[Measurement]:
        """Run the program, log its stderr, and read its rows; skipped with the reason when it
        fails or runs longer than ``TIMEOUT_S``."""
        try:
            ran = subprocess.run(
                command, check=False, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S
            )
        except subprocess.TimeoutExpired:
            return self.skipped(config, f"{self.program} ran longer than {TIMEOUT_S} s and was stopped")
        for line in ran.stderr.splitlines():
            log(f"[dim]{line}[/dim]")
        if ran.returncode != 0:
            return self.skipped(config, f"{self.program} failed: {ran.stderr.strip()[-500:]}")
        doc = json.loads(ran.stdout)
        return self.rows_of(doc, environment(doc))
