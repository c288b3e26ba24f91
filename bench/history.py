"""``make bench`` keeps its history: each run's ratios to raw redis-py, stored in ``bench/history/``
by machine kind, and compared with the last stored run of the same kind.

A ratio is only comparable on the same kind of machine (processor model, core count, system), and a
``--quick`` run only with another: the kind names all of these. A ratio that got worse by more
than :data:`TOLERANCE` (fell, for a figure where higher is better; rose, where lower is) is
flagged in the report. The stored files are small (ratios only) and meant to be committed.
"""

from __future__ import annotations

import json
import os
import platform
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HISTORY_DIR = Path(__file__).resolve().parent / "history"
TOLERANCE = 0.10


def _processor() -> str:
    """The processor's model name (``/proc/cpuinfo`` on Linux), else what platform says."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_kind(quick: bool) -> str:
    """A file-name-safe key for runs whose ratios can be compared."""
    raw = f"{platform.system()}-{platform.machine()}-{os.cpu_count() or 0}cpu-{_processor()}"
    kind = re.sub(r"[^A-Za-z0-9.]+", "-", raw).strip("-").lower()
    return kind + ("-quick" if quick else "")


def summary(doc: dict[str, Any]) -> dict[str, Any]:
    """What the history keeps of a result document: when, and each measurement's ratios."""
    return {
        "started_at": doc["environment"]["started_at"],
        "ratios": {
            m["id"]: {"title": m["title"], "better": m["better"], "ratio_to_raw": m["ratio_to_raw"]}
            for m in doc["measurements"]
        },
    }


@dataclass(frozen=True)
class Regression:
    """A ratio of ``peer`` in measurement ``measurement`` that got worse than ``limit`` allows."""

    measurement: str
    title: str
    peer: str
    before: float
    now: float

    @property
    def change(self) -> float:
        """The relative change of the ratio, negative when it fell."""
        return self.now / self.before - 1


def regressions(
    before: dict[str, Any], now: dict[str, Any], tolerance: float = TOLERANCE
) -> list[Regression]:
    """Each ratio of ``now`` that is worse than the same ratio of ``before`` by more than
    ``tolerance`` (two summaries)."""
    found = []
    for measurement, row in now["ratios"].items():
        old = before["ratios"].get(measurement)
        if old is None:
            continue
        for peer, ratio in row["ratio_to_raw"].items():
            previous = old["ratio_to_raw"].get(peer)
            if previous is None or previous <= 0:
                continue
            worse = (
                ratio < previous * (1 - tolerance)
                if row["better"] == "higher"
                else ratio * (1 - tolerance) > previous
            )
            if worse:
                found.append(Regression(measurement, row["title"], peer, previous, ratio))
    return found


def last(kind: str, directory: Path = HISTORY_DIR) -> tuple[Path, dict[str, Any]] | None:
    """The last stored run of ``kind`` (file names sort by time), or None."""
    runs = sorted((directory / kind).glob("*.json"))
    return (runs[-1], json.loads(runs[-1].read_text())) if runs else None


def record(
    doc: dict[str, Any], quick: bool, stamp: str, directory: Path = HISTORY_DIR
) -> tuple[Path, Path | None, list[Regression]]:
    """Store the run's summary; return where, the last earlier run of its kind (if any) and the
    ratios that got worse since it."""
    kind = machine_kind(quick)
    earlier = last(kind, directory)
    now = summary(doc)
    path = directory / kind / f"{stamp}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(now, indent=2, sort_keys=True) + "\n")
    if earlier is None:
        return path, None, []
    return path, earlier[0], regressions(earlier[1], now)
