"""Write or check conformance/coverage/matrix.json, the coverage matrix (conformance/README.md).

``--write`` regenerates it from the cases and conformance/coverage/waivers.json; ``--check``
exits 1 when it is stale or when a cell is empty without a waiver, a waiver covers a cell that
has cases, or a hand-listed case does not do what its entry says. ``--summary`` prints the counts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rwq.conformance.coverage import matrix

ROOT = Path(__file__).resolve().parents[1]
MATRIX = ROOT / "conformance" / "coverage" / "matrix.json"
WAIVERS = ROOT / "conformance" / "coverage" / "waivers.json"


def build() -> tuple[str, list[str], dict[str, int]]:
    """The matrix's text, the check's problems and the summary."""
    documents = [json.loads(p.read_text()) for p in sorted((ROOT / "conformance" / "cases").glob("*.json"))]
    manual = json.loads(WAIVERS.read_text()) if WAIVERS.exists() else {}
    document, problems = matrix(documents, manual)
    cells = document.pop("cells")
    lines = [json.dumps(document, indent=2)[:-2] + ',\n  "cells": {']
    lines.append(",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in cells.items()))
    return "\n".join(lines) + "\n  }\n}\n", problems, document["summary"]


def main(argv: list[str]) -> int:
    text, problems, summary = build()
    if "--summary" in argv:
        print(json.dumps(summary))
        for problem in problems:
            print(problem)
    if "--write" in argv:
        MATRIX.parent.mkdir(parents=True, exist_ok=True)
        MATRIX.write_text(text)
    if "--check" in argv:
        if not MATRIX.exists() or MATRIX.read_text() != text:
            problems.append(
                f"stale: {MATRIX.relative_to(ROOT)} (run: python tools/coverage_matrix.py --write)"
            )
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
