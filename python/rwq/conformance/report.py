"""Reports: the streamed ``events.jsonl``, ``report.json`` (schemas/conformance-report.schema.json),
``junit.xml`` and ``summary.md`` for CI, the terminal table and the closing line
``N passed, N failed, N skipped``."""

from __future__ import annotations

import datetime as dt
import json
import re
import shlex
import threading
import xml.etree.ElementTree as ET
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
    "warn",
    "skip",
    "not-applicable",
    "not-run",
)
PASSED = frozenset({"pass"})
FAILED = frozenset({"fail", "error", "timeout", "crash", "xfail", "xpass"})
UNEXPECTED = frozenset({"fail", "error", "timeout", "crash", "xpass"})
"""Statuses that make a run non-conformant (``xfail`` is failing as the port declared)."""
SKIPPED = frozenset({"skip", "not-applicable", "not-run"})
WARNED = frozenset({"warn"})
"""A case of SHOULDs that failed (``should: true``): reported, never gating (conformance/README.md)."""
MAX_LISTED = 20
"""Failures (and failing requirements) listed in the terminal and summary.md; the rest are counted."""
STYLES = {
    "pass": "green",
    "fail": "bold red",
    "error": "bold red",
    "timeout": "bold red",
    "crash": "bold red",
    "xfail": "yellow",
    "xpass": "bold red",
    "warn": "yellow",
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
        self._lock = threading.Lock()  # workers of a --jobs run emit too

    def emit(self, event: str, **fields: Any) -> None:
        line = json.dumps({"event": event, "at": now(), **fields}, ensure_ascii=False) + "\n"
        with self._lock:
            self._file.write(line)
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
        "skipped": sum(counts[s] for s in SKIPPED),
        "warnings": sum(counts[s] for s in WARNED),
        "statuses": {status: counts[status] for status in STATUSES if counts[status]},
        "skip_reasons": skip_reasons(records),
    }


def skip_reasons(records: list[dict[str, Any]]) -> dict[str, int]:
    """How many cases did not run for each reason (most frequent first)."""
    reasons = Counter(
        f"{record['status']}: {record['note'] or 'no reason given'}"
        for record in records
        if record["status"] in SKIPPED
    )
    return dict(reasons.most_common())


def failing_requirements(records: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Per requirement id, the cases citing it that failed unexpectedly (most failures first)."""
    failing: dict[str, list[str]] = {}
    for record in records:
        if record["status"] in UNEXPECTED:
            for req in record["requirements"] or ["(no requirement)"]:
                failing.setdefault(req, []).append(record["id"])
    return dict(sorted(failing.items(), key=lambda item: (-len(item[1]), item[0])))


def _listing(ids: list[str], limit: int = 3) -> str:
    more = f", +{len(ids) - limit} more" if len(ids) > limit else ""
    return ", ".join(ids[:limit]) + more


def rerun_command(report: dict[str, Any], case_id: str | None = None) -> str:
    """The command that replays the run (or one case of it): same adapter, seed, Redis (or
    cluster) and profile declared-keys setting."""
    parts = ["rwq conformance --adapter", shlex.quote(report["adapter"]["command"])]
    if report.get("seed") is not None:
        parts.append(f"--seed {report['seed']}")
    if report["environment"].get("cluster"):
        parts.append("--cluster")
    if not report["environment"].get("managed", True) and report["environment"].get("url"):
        parts.append(f"--redis-url {shlex.quote(report['environment']['url'])}")
    if report.get("declared_keys"):
        parts.append("--declared-keys")
    if case_id:
        parts.append(f"-k {shlex.quote(case_id)}")
    return " ".join(parts)


def closing_line(summary: dict[str, Any]) -> str:
    line = f"{summary['passed']} passed, {summary['failed']} failed, {summary['skipped']} skipped"
    warnings = summary.get("warnings", 0)
    return line + (f", {warnings} warning{'s' if warnings != 1 else ''}" if warnings else "")


def requirement_verdicts(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per requirement id: ``fail`` if any of its cases failed, ``warn`` if none failed and a
    case of SHOULDs warned, ``pass`` if some ran and all passed, else ``not-run``; with the cases
    that cite it."""
    verdicts: dict[str, dict[str, Any]] = {}
    for record in records:
        for req in record["requirements"]:
            entry = verdicts.setdefault(req, {"verdict": "not-run", "cases": []})
            entry["cases"].append(record["id"])
            if record["status"] in FAILED - {"xpass"}:
                entry["verdict"] = "fail"
            elif record["status"] in WARNED and entry["verdict"] != "fail":
                entry["verdict"] = "warn"
            elif record["status"] in PASSED | {"xpass"} and entry["verdict"] == "not-run":
                entry["verdict"] = "pass"
    return dict(sorted(verdicts.items()))


def write_report(path: Path, report: dict[str, Any]) -> None:
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot carry."""
    return _NOT_XML.sub("\ufffd", text)


def junit_xml(report: dict[str, Any]) -> str:
    """The run as JUnit XML: a testsuite per group, a testcase per case (classname = group) with
    its requirement ids as properties; ``failure`` for wrong behaviour, ``error`` for errors,
    timeouts and crashes, ``skipped`` for cases that did not run and declared failures (xfail)."""
    by_group: dict[str, list[dict[str, Any]]] = {}
    for record in report["cases"]:
        by_group.setdefault(record["id"].split("/", 1)[0], []).append(record)
    root = ET.Element("testsuites", name="rwq conformance", time=f"{report['duration_ms'] / 1000:.3f}")
    totals: Counter[str] = Counter()
    for group, records in by_group.items():
        suite = ET.SubElement(root, "testsuite", name=group)
        counts: Counter[str] = Counter()
        for record in records:
            counts["tests"] += 1
            case = ET.SubElement(
                suite,
                "testcase",
                classname=group,
                name=_xml_text(record["id"]),
                time=f"{record['duration_ms'] / 1000:.3f}",
            )
            properties = ET.SubElement(case, "properties")
            for req in record["requirements"]:
                ET.SubElement(properties, "property", name="requirement", value=req)
            ET.SubElement(properties, "property", name="status", value=record["status"])
            failure = record["failure"] or {}
            message = _xml_text(failure.get("message") or record["note"] or record["status"])
            if record["status"] in ("fail", "xpass"):
                counts["failures"] += 1
                element = ET.SubElement(case, "failure", message=message, type=failure.get("kind", "xpass"))
                element.text = _xml_text(_failure_text(record, report))
            elif record["status"] in UNEXPECTED:
                counts["errors"] += 1
                element = ET.SubElement(case, "error", message=message, type=failure.get("kind", ""))
                element.text = _xml_text(_failure_text(record, report))
            elif record["status"] in SKIPPED | {"xfail"}:
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=_xml_text(f"{record['status']}: {message}"))
            elif record["status"] in WARNED:  # passes in CI; the SHOULD it missed is in system-out
                ET.SubElement(case, "system-out").text = _xml_text(f"warning (a SHOULD): {message}")
        for key in ("tests", "failures", "errors", "skipped"):
            suite.set(key, str(counts[key]))
        suite.set("time", f"{sum(r['duration_ms'] for r in records) / 1000:.3f}")
        totals.update(counts)
    totals.update(_run_problems(root, report))
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(totals[key]))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _run_problems(root: ET.Element, report: dict[str, Any]) -> Counter[str]:
    """A ``run`` testsuite for what fails a run outside its cases (an aborted run, a broken
    handshake, known-failures entries that match nothing), so a CI that reads only JUnit sees it."""
    problems = []
    if report["aborted"]:
        problems.append(
            ("aborted", "error", report["aborted"], "\n".join(report.get("aborted_stderr") or []))
        )
    problems += [
        ("known-failures", "failure", f"[[{entry['kind']}]] {entry['case']} matches no case", entry["reason"])
        for entry in report["known_failures"]["unmatched"]
    ]
    counts: Counter[str] = Counter()
    if not problems:
        return counts
    suite = ET.SubElement(root, "testsuite", name="run")
    for name, kind, message, text in problems:
        case = ET.SubElement(suite, "testcase", classname="run", name=name, time="0")
        ET.SubElement(case, kind, message=_xml_text(message)).text = _xml_text(text)
        counts["tests"] += 1
        counts["errors" if kind == "error" else "failures"] += 1
    for key in ("tests", "failures", "errors"):
        suite.set(key, str(counts[key]))
    return counts


def _failure_text(record: dict[str, Any], report: dict[str, Any]) -> str:
    failure = record["failure"] or {}
    lines = [
        f"{record['title']}",
        f"requirements: {', '.join(record['requirements'])}",
        f"{record['source']}, step {failure.get('step')} ({failure.get('verb')}): {failure.get('kind')}",
        str(failure.get("message") or record["note"] or ""),
    ]
    for label, tail in record.get("stderr", {}).items():
        lines += [f"stderr of {label}:", *(f"  {line}" for line in tail[-20:])]
    lines.append("rerun: " + rerun_command(report, record["id"]))
    return "\n".join(lines)


def _md(text: str) -> str:
    """``text`` safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_summary(report: dict[str, Any]) -> str:
    """``summary.md``: the verdict, counts per group, why cases were skipped, the failing
    requirements and the first :data:`MAX_LISTED` failures (for ``$GITHUB_STEP_SUMMARY``)."""
    implementation = report["implementation"] or {}
    environment = report["environment"]
    summary = report["summary"]
    name = " ".join(str(implementation.get(k, "")) for k in ("name", "version")).strip() or "(no handshake)"
    lines = [
        f"## RWQ/1 conformance: {name}: **{report['verdict']}** (exit code {report['exit_code']})",
        "",
        f"{closing_line(summary)}; seed {report.get('seed')}; redis {environment.get('version', '?')} "
        f"({'managed' if environment.get('managed') else 'external'}, {environment.get('clock', '?')} clock)",
        "",
    ]
    if report["aborted"]:
        lines += [f"**Run aborted:** {_md(report['aborted'])}", ""]
        if report.get("aborted_stderr"):
            lines += ["Adapter stderr (last lines):", "", "```", *report["aborted_stderr"], "```", ""]
    by_group: dict[str, Counter[str]] = {}
    for record in report["cases"]:
        by_group.setdefault(record["id"].split("/", 1)[0], Counter())[record["status"]] += 1
    if by_group:
        present = [status for status in STATUSES if any(c[status] for c in by_group.values())]
        lines += ["| group | " + " | ".join(present) + " |", "|---" * (len(present) + 1) + "|"]
        lines += [
            f"| {group} | " + " | ".join(str(counts[s] or "") for s in present) + " |"
            for group, counts in by_group.items()
        ]
        lines.append("")
    if summary.get("skip_reasons"):
        lines += ["Not run:", ""]
        lines += [f"- {count}: {_md(reason)}" for reason, count in summary["skip_reasons"].items()]
        lines.append("")
    failing = failing_requirements(report["cases"])
    if failing:
        lines += ["### Failing requirements", "", "| requirement | failed cases |", "|---|---|"]
        lines += [
            f"| {req} | {len(ids)}: {_md(_listing(ids))} |" for req, ids in list(failing.items())[:MAX_LISTED]
        ]
        if len(failing) > MAX_LISTED:
            lines.append(f"\n{len(failing) - MAX_LISTED} more failing requirements (see report.json)")
        lines.append("")
    failed = [record for record in report["cases"] if record["status"] in UNEXPECTED]
    if failed:
        lines += ["### Failures", ""]
        for record in failed[:MAX_LISTED]:
            failure = record["failure"] or {}
            message = failure.get("message") or record["note"] or ""
            lines.append(f"- **{record['status']}** `{record['id']}`: {_md(message[:300])}")
        if len(failed) > MAX_LISTED:
            lines.append(f"- {len(failed) - MAX_LISTED} more failures (see report.json)")
        lines += ["", f"Rerun one: `{rerun_command(report, failed[0]['id'])}`", ""]
    return "\n".join(lines)


class Terminal:
    """What a person sees: one line per case as it finishes, then a table, failures and the
    closing line."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def seed(self, seed: int) -> None:
        """The first line of a run: the seed of every random choice, and how to replay it."""
        self.message(f"rwq conformance: seed {seed} (--seed {seed} replays this run)")

    def header(
        self, implementation: dict[str, Any], profiles: list[str], environment: dict[str, Any]
    ) -> None:
        clock = "frozen clock" if environment["clock"] == "frozen" else "running clock, state surgery"
        where = "managed" if environment["managed"] else environment["url"]
        self.message(
            f"{implementation.get('name')} {implementation.get('version')} "
            f"({implementation.get('language')}); profiles {', '.join(profiles)}"
        )
        self.message(f"redis {environment['version']} ({where}, {clock})")
        if environment.get("clock_note"):
            self.message(
                f"  {environment['clock_note']}: cases that need a frozen clock are skipped", "yellow"
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
        for reason, count in report["summary"].get("skip_reasons", {}).items():
            self.message(f"{count:>5} {reason}", "dim")
        failed = [record for record in records if record["status"] in UNEXPECTED]
        for record in failed[:MAX_LISTED]:
            self._details(record, report)
        if len(failed) > MAX_LISTED:
            self.message(f"\n... and {len(failed) - MAX_LISTED} more failures (report.json has them all)")
        self._requirements(records)
        for entry in report["known_failures"]["unmatched"]:
            self.message(
                f"known-failures entry matches no case: [[{entry['kind']}]] {entry['case']}", "bold red"
            )
        if report["aborted"]:
            self.message(f"run aborted: {report['aborted']}", "bold red")
            if report.get("aborted_stderr"):
                self.message("adapter stderr (last lines):", "dim")
                for line in report["aborted_stderr"]:
                    self.message(f"  {line}", "dim")
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

    def _requirements(self, records: list[dict[str, Any]]) -> None:
        failing = failing_requirements(records)
        if not failing:
            return
        self.message(f"\nfailing requirements ({len(failing)}):", "bold red")
        for req, ids in list(failing.items())[:MAX_LISTED]:
            # One line each, cut to the width: report.json and summary.md list every case.
            line = Text(f"  {req}  {len(ids)} failed: {_listing(ids, 1)}")
            self.console.print(line, highlight=False, no_wrap=True, overflow="ellipsis")
        if len(failing) > MAX_LISTED:
            self.message(f"  ... and {len(failing) - MAX_LISTED} more requirements")

    def _details(self, record: dict[str, Any], report: dict[str, Any]) -> None:
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
        self.message(f"  rerun: {rerun_command(report, record['id'])}", "dim")
