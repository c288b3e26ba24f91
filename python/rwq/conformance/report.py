"""Reports: the streamed ``events.jsonl``, ``report.json`` (schemas/conformance-report.schema.json),
the terminal table and the closing line ``N passed, N failed, N skipped``."""

from __future__ import annotations

import datetime as dt
import json
import shlex
from collections import Counter
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .cases import Case
from .execution import CaseRun
from .known_failures import Entry

REPORT_FORMAT = 1
STATUSES = (
    "pass",
    "fail",
    "error",
    "timeout",
    "crash",
    "xfail",
    "xpass",
    "skip",
    "not-applicable",
    "not-run",
)
PASSED = frozenset({"pass"})
FAILED = frozenset({"fail", "error", "timeout", "crash", "xfail", "xpass"})
UNEXPECTED = frozenset({"fail", "error", "timeout", "crash", "xpass"})
"""Statuses that make a run non-conformant (``xfail`` is failing as the port declared)."""
STYLES = {
    "pass": "green",
    "fail": "bold red",
    "error": "bold red",
    "timeout": "bold red",
    "crash": "bold red",
    "xfail": "yellow",
    "xpass": "bold red",
    "skip": "dim",
    "not-applicable": "dim",
    "not-run": "dim",
}


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


class EventLog:
    """``events.jsonl``: one JSON object per line, flushed at once so it survives aborts."""

    def __init__(self, path: Path) -> None:
        self._file: IO[str] = path.open("w", encoding="utf-8")

    def emit(self, event: str, **fields: Any) -> None:
        self._file.write(json.dumps({"event": event, "at": now(), **fields}, ensure_ascii=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> EventLog:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def case_record(
    case: Case,
    status: str,
    *,
    run: CaseRun | None = None,
    known: Entry | None = None,
    note: str | None = None,
) -> dict[str, Any]:
    """One entry of ``report.json``'s ``cases``."""
    record: dict[str, Any] = {
        "id": case.id,
        "title": case.title,
        "source": case.source,
        "status": status,
        "profiles": list(case.profiles),
        "requirements": list(case.requirements),
        "needs": list(case.needs),
        "duration_ms": run.duration_ms if run else 0,
        "failure": run.failure.to_json() if run and run.failure else None,
        "known_failure": known.to_json() if known else None,
        "note": note,
    }
    if run and run.failure:
        record["stderr"] = run.stderr
        record["transcript"] = run.transcript
    return record


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    counts = Counter(record["status"] for record in records)
    return {
        "total": len(records),
        "passed": sum(counts[s] for s in PASSED),
        "failed": sum(counts[s] for s in FAILED),
        "skipped": len(records) - sum(counts[s] for s in PASSED | FAILED),
        "statuses": {status: counts[status] for status in STATUSES if counts[status]},
    }


def closing_line(summary: dict[str, Any]) -> str:
    return f"{summary['passed']} passed, {summary['failed']} failed, {summary['skipped']} skipped"


def requirement_verdicts(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per requirement id: ``fail`` if any of its cases failed, ``pass`` if some ran and all
    passed, else ``not-run``; with the cases that cite it."""
    verdicts: dict[str, dict[str, Any]] = {}
    for record in records:
        for req in record["requirements"]:
            entry = verdicts.setdefault(req, {"verdict": "not-run", "cases": []})
            entry["cases"].append(record["id"])
            if record["status"] in FAILED - {"xpass"}:
                entry["verdict"] = "fail"
            elif record["status"] in PASSED | {"xpass"} and entry["verdict"] == "not-run":
                entry["verdict"] = "pass"
    return dict(sorted(verdicts.items()))


def write_report(path: Path, report: dict[str, Any]) -> None:
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


class Terminal:
    """What a person sees: one line per case as it finishes, then a table, failures and the
    closing line."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def header(
        self, implementation: dict[str, Any], profiles: list[str], environment: dict[str, Any]
    ) -> None:
        clock = "frozen clock" if environment["clock"] == "frozen" else "state surgery"
        where = "managed" if environment["managed"] else environment["url"]
        self.console.print(
            f"[bold]rwq conformance[/bold]: {implementation.get('name')} {implementation.get('version')} "
            f"({implementation.get('language')}); profiles {', '.join(profiles)}; "
            f"redis {environment['version']} ({where}, {clock})",
            highlight=False,
        )

    def case(self, record: dict[str, Any]) -> None:
        line = Text()
        line.append(f"{record['status'].upper():>14}", style=STYLES[record["status"]])
        line.append(f"  {record['id']}")
        if record["status"] not in ("pass", "skip", "not-applicable", "not-run") and record["failure"]:
            line.append(f"  {record['failure']['message'][:120]}", style="dim")
        self.console.print(line, highlight=False, no_wrap=True, overflow="ellipsis")

    def message(self, text: str, style: str = "") -> None:
        self.console.print(Text(text, style=style), highlight=False)

    def final(self, report: dict[str, Any]) -> None:
        records = report["cases"]
        if records:
            self.console.print(self._table(records))
        for record in records:
            if record["status"] in UNEXPECTED:
                self._details(record, report["adapter"]["command"])
        for entry in report["known_failures"]["unmatched"]:
            self.message(
                f"known-failures entry matches no case: [[{entry['kind']}]] {entry['case']}", "bold red"
            )
        if report["aborted"]:
            self.message(f"run aborted: {report['aborted']}", "bold red")
        self.message(f"verdict: {report['verdict']} (exit code {report['exit_code']})", "bold")
        # The closing line is printed plain: tools grep for it.
        self.console.print(closing_line(report["summary"]), markup=False, highlight=False, style="")

    @staticmethod
    def _table(records: list[dict[str, Any]]) -> Table:
        by_group: dict[str, Counter[str]] = {}
        for record in records:
            by_group.setdefault(record["id"].split("/", 1)[0], Counter())[record["status"]] += 1
        present = [status for status in STATUSES if any(counts[status] for counts in by_group.values())]
        table = Table(title="RWQ/1 conformance", title_justify="left")
        table.add_column("group")
        for status in present:
            table.add_column(status, justify="right", style=STYLES[status])
        for group, counts in by_group.items():
            table.add_row(group, *(str(counts[status] or "") for status in present))
        return table

    def _details(self, record: dict[str, Any], adapter: str) -> None:
        failure = record["failure"] or {}
        where = f"step {failure.get('step')} ({failure.get('verb')})" if failure.get("step") else "setup"
        self.message(
            f"\n{record['status'].upper()} {record['id']} - {record['title']}", STYLES[record["status"]]
        )
        self.message(f"  requirements: {', '.join(record['requirements'])}; {record['source']}, {where}")
        self.message(f"  {failure.get('kind', '')}: {failure.get('message', record.get('note') or '')}")
        for label, lines in record.get("stderr", {}).items():
            self.message(f"  stderr of {label} (last lines):", "dim")
            for line in lines[-10:]:
                self.message(f"    {line}", "dim")
        self.message(f"  rerun: rwq conformance --adapter {shlex.quote(adapter)} -k {record['id']}", "dim")
