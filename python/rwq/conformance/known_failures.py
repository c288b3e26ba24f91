"""A port's known-failures file (TOML), with strict semantics.

* ``[[fail]]``: matching cases are expected to fail (status ``xfail``); one that passes is an
  ``xpass`` and fails the run; with ``message``, a failure whose message does not start with it
  stays a plain failure.
* ``[[skip]]``: matching cases are not run (crashers, hangers).
* An entry that matches no case of the corpus fails the run (it is stale or misspelt).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import data
from .cases import Case, glob_regex

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 has no tomllib; tomli is the same parser
    import tomli as tomllib  # type: ignore[import-not-found,no-redef,unused-ignore]

FAILING = frozenset({"fail", "error", "timeout", "crash"})


class KnownFailuresError(Exception):
    """The known-failures file cannot be read or is invalid."""


@dataclass(frozen=True)
class Entry:
    """One ``[[fail]]`` or ``[[skip]]`` entry."""

    kind: str
    case: str
    reason: str
    issue: str | None = None
    message: str | None = None

    def matches(self, case: Case) -> bool:
        regex = glob_regex(self.case)
        return any(regex.match(name) for name in (case.id, *case.aliases))

    def to_json(self) -> dict[str, Any]:
        entry = {"kind": self.kind, "case": self.case, "reason": self.reason}
        entry.update(
            {key: value for key, value in (("issue", self.issue), ("message", self.message)) if value}
        )
        return entry


@dataclass(frozen=True)
class KnownFailures:
    """The entries of one file (an empty list when no file is given)."""

    entries: tuple[Entry, ...] = ()
    path: str | None = None

    @classmethod
    def load(cls, path: Path) -> KnownFailures:
        try:
            document = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise KnownFailuresError(f"{path}: {exc}") from exc
        problems = data.schema_errors("known-failures", document)
        if problems:
            raise KnownFailuresError(f"{path}: " + "; ".join(problems))
        entries = tuple(Entry(kind, **raw) for kind in ("fail", "skip") for raw in document.get(kind, ()))
        return cls(entries, str(path))

    def find(self, kind: str, case: Case) -> Entry | None:
        """The first entry of ``kind`` that matches ``case``."""
        return next((entry for entry in self.entries if entry.kind == kind and entry.matches(case)), None)

    def unmatched(self, corpus: Iterable[Case]) -> list[Entry]:
        """Entries that match no case at all."""
        cases = list(corpus)
        return [entry for entry in self.entries if not any(entry.matches(case) for case in cases)]


def apply_fail_entry(entry: Entry | None, status: str, message: str | None) -> str:
    """The final status of a case that ran, given its ``[[fail]]`` entry (if any)."""
    if entry is None:
        return status
    if status == "pass":
        return "xpass"
    if status in FAILING and (entry.message is None or (message or "").startswith(entry.message)):
        return "xfail"
    return status
